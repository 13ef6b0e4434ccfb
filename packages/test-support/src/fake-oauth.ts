import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local OAuth 2.0 provider speaking the Google and GitHub wire protocols (authorize redirect, code exchange with
 * PKCE, user info), so the gateway's OAuth flow is tested end to end without the real providers.
 */

export interface GoogleProfile {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface GitHubProfile {
  user: { id: number; login: string; name?: string | null; email?: string | null };
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

export const CLIENT = {
  google: { id: "google-client-id", secret: "google-client-secret" },
  github: { id: "github-client-id", secret: "github-client-secret" },
} as const;

type Provider = keyof typeof CLIENT;

interface PendingCode {
  provider: Provider;
  redirectUri: string;
  codeChallenge: string;
  challengeMethod: string;
}

export interface FakeOAuthServer {
  url: string;
  /** the GOOGLE_* and GITHUB_* settings pointing the gateway here */
  env: Record<string, string>;
  google: { profile: GoogleProfile };
  github: { profile: GitHubProfile };
  /** query of the last authorize request, per provider */
  lastAuthorize: Partial<Record<Provider, URLSearchParams>>;
  /** token requests seen (form fields), for assertions on PKCE and client auth */
  tokenRequests: Array<{ provider: Provider; form: URLSearchParams; authorization?: string }>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
}

const s256 = (verifier: string): string => createHash("sha256").update(verifier).digest("base64url");

/** client_secret_basic or client_secret_post, as real providers accept both */
function clientCredentials(req: IncomingMessage, form: URLSearchParams): { id?: string; secret?: string } {
  const header = req.headers.authorization;
  if (header?.startsWith("Basic ")) {
    const [id, secret] = Buffer.from(header.slice(6), "base64").toString("utf8").split(":");
    return { id: id && decodeURIComponent(id), secret: secret && decodeURIComponent(secret) };
  }
  return { id: form.get("client_id") ?? undefined, secret: form.get("client_secret") ?? undefined };
}

export async function startFakeOAuth(): Promise<FakeOAuthServer> {
  const codes = new Map<string, PendingCode>();
  const tokens = new Map<string, Provider>();
  const state: Omit<FakeOAuthServer, "url" | "env" | "close"> = {
    google: { profile: { sub: "google-user-1", email: "ada@example.com", email_verified: true, name: "Ada Lovelace" } },
    github: {
      profile: {
        user: { id: 4242, login: "octo", name: "Octo Cat", email: null },
        emails: [
          { email: "octo-secondary@example.com", primary: false, verified: true },
          { email: "octo@example.com", primary: true, verified: true },
        ],
      },
    },
    lastAuthorize: {},
    tokenRequests: [],
  };

  function authorize(provider: Provider, url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    state.lastAuthorize[provider] = q;
    const redirectUri = q.get("redirect_uri");
    if (q.get("client_id") !== CLIENT[provider].id || !redirectUri || q.get("response_type") !== "code") {
      json(res, 400, { error: "invalid_request" });
      return;
    }
    // consent is automatic: straight back to the app with a code
    const code = randomBytes(12).toString("hex");
    codes.set(code, { provider, redirectUri, codeChallenge: q.get("code_challenge") ?? "", challengeMethod: q.get("code_challenge_method") ?? "" });
    const back = new URL(redirectUri);
    back.searchParams.set("code", code);
    back.searchParams.set("state", q.get("state") ?? "");
    res.writeHead(302, { Location: back.toString() });
    res.end();
  }

  async function token(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    state.tokenRequests.push({ provider, form, authorization: req.headers.authorization });
    const creds = clientCredentials(req, form);
    const code = form.get("code") ?? "";
    const pending = codes.get(code);
    codes.delete(code); // single use, as at the real providers
    const verifier = form.get("code_verifier") ?? "";
    const ok = creds.id === CLIENT[provider].id && creds.secret === CLIENT[provider].secret
      && form.get("grant_type") === "authorization_code" && pending?.provider === provider
      && pending.redirectUri === form.get("redirect_uri")
      && pending.challengeMethod === "S256" && pending.codeChallenge === s256(verifier);
    // GitHub answers errors with 200 and an error field; Google with 400
    if (!ok) {
      json(res, provider === "github" ? 200 : 400, { error: "invalid_grant", error_description: "bad code, verifier or client" });
      return;
    }
    const accessToken = randomBytes(16).toString("hex");
    tokens.set(accessToken, provider);
    json(res, 200, { access_token: accessToken, token_type: "bearer", scope: "" });
  }

  function bearer(req: IncomingMessage, provider: Provider): boolean {
    const match = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "");
    return match?.[1] !== undefined && tokens.get(match[1]) === provider;
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const route = `${req.method} ${url.pathname}`;
    const handle = async (): Promise<void> => {
      switch (route) {
        case "GET /google/authorize": return authorize("google", url, res);
        case "GET /github/authorize": return authorize("github", url, res);
        case "POST /google/token": return token("google", req, res);
        case "POST /github/token": return token("github", req, res);
        case "GET /google/userinfo":
          return bearer(req, "google") ? json(res, 200, state.google.profile) : json(res, 401, { error: "invalid_token" });
        case "GET /github/api/user":
          return bearer(req, "github") ? json(res, 200, state.github.profile.user) : json(res, 401, { message: "Bad credentials" });
        case "GET /github/api/user/emails":
          return bearer(req, "github") ? json(res, 200, state.github.profile.emails) : json(res, 401, { message: "Bad credentials" });
        default:
          return json(res, 404, { error: "not_found" });
      }
    };
    handle().catch(() => json(res, 500, { error: "server_error" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    ...state,
    url,
    env: {
      GOOGLE_CLIENT_ID: CLIENT.google.id,
      GOOGLE_CLIENT_SECRET: CLIENT.google.secret,
      GOOGLE_AUTHORIZE_URL: `${url}/google/authorize`,
      GOOGLE_TOKEN_URL: `${url}/google/token`,
      GOOGLE_USERINFO_URL: `${url}/google/userinfo`,
      GITHUB_CLIENT_ID: CLIENT.github.id,
      GITHUB_CLIENT_SECRET: CLIENT.github.secret,
      GITHUB_AUTHORIZE_URL: `${url}/github/authorize`,
      GITHUB_TOKEN_URL: `${url}/github/token`,
      GITHUB_API_URL: `${url}/github/api`,
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
