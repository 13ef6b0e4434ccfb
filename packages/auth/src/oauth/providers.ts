import { CodeChallengeMethod, OAuth2Client } from "arctic";
import type { Config } from "@gw/config";

type OAuthProviderConfig = Config["oauth"]["google"];

export type OAuthProvider = "google" | "github";
export const OAUTH_PROVIDERS: readonly OAuthProvider[] = ["google", "github"];

export const isOAuthProvider = (value: string): value is OAuthProvider => (OAUTH_PROVIDERS as readonly string[]).includes(value);

/** What a provider tells us about the person who signed in. */
export interface OAuthProfile {
  providerId: string;
  email?: string;
  /** the provider vouches that the person owns `email` */
  emailVerified: boolean;
  name: string;
}

/** A failure talking to the provider; the callback turns it into /login?error=<code>. */
export class OAuthFlowError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = "OAuthFlowError";
  }
}

const SCOPES: Record<OAuthProvider, string[]> = {
  google: ["openid", "email", "profile"],
  github: ["read:user", "user:email"],
};

const TIMEOUT_MS = 10_000;

function client(config: OAuthProviderConfig, redirectUri: string): OAuth2Client {
  if (!config.clientId) throw new OAuthFlowError("provider_not_configured", "The provider has no client id configured.");
  return new OAuth2Client(config.clientId, config.clientSecret ?? null, redirectUri);
}

/** The provider's consent page, with state and an S256 PKCE challenge. */
export function authorizationUrl(provider: OAuthProvider, config: OAuthProviderConfig, redirectUri: string, state: string, codeVerifier: string): URL {
  return client(config, redirectUri).createAuthorizationURLWithPKCE(config.authorizeUrl, state, CodeChallengeMethod.S256, codeVerifier, SCOPES[provider]);
}

/**
 * arctic's token request takes no signal: a provider that never answers, or never finishes its answer, is given up on
 * after TIMEOUT_MS like the profile calls, so the callback answers instead of hanging.
 */
function withinTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new OAuthFlowError("oauth_failed", `${what} got no answer within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** Exchanges the authorization code (with the PKCE verifier) for an access token. */
export async function exchangeCode(config: OAuthProviderConfig, redirectUri: string, code: string, codeVerifier: string): Promise<string> {
  try {
    const tokens = await withinTimeout(client(config, redirectUri).validateAuthorizationCode(config.tokenUrl, code, codeVerifier), `Token exchange with ${config.tokenUrl}`);
    return tokens.accessToken();
  } catch (err) {
    if (err instanceof OAuthFlowError) throw err;
    throw new OAuthFlowError("oauth_failed", `Token exchange failed: ${(err as Error).message}`);
  }
}

async function getJson(url: string, accessToken: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { Authorization: `Bearer ${accessToken}`, Accept: "application/json", "User-Agent": "ai-gateway" },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new OAuthFlowError("oauth_failed", `Could not reach ${url}: ${(err as Error).message}`);
  }
  if (!res.ok) throw new OAuthFlowError("oauth_failed", `${url} answered ${res.status}`);
  try {
    return await res.json();
  } catch (err) {
    // an answer that is not JSON, or still arriving when the timeout ends it, is the provider's failure
    throw new OAuthFlowError("oauth_failed", `${url} sent no readable answer: ${(err as Error).message}`);
  }
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);
const obj = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {});

async function googleProfile(config: OAuthProviderConfig, accessToken: string): Promise<OAuthProfile> {
  const info = obj(await getJson(config.apiUrl, accessToken));
  const sub = str(info.sub);
  if (!sub) throw new OAuthFlowError("oauth_failed", "The userinfo answer has no subject.");
  const email = str(info.email);
  return { providerId: sub, email, emailVerified: email !== undefined && info.email_verified === true, name: str(info.name) ?? "" };
}

async function githubProfile(config: OAuthProviderConfig, accessToken: string): Promise<OAuthProfile> {
  const base = config.apiUrl.replace(/\/$/, "");
  const user = obj(await getJson(`${base}/user`, accessToken));
  const id = typeof user.id === "number" || typeof user.id === "string" ? String(user.id) : undefined;
  if (!id) throw new OAuthFlowError("oauth_failed", "The GitHub user has no id.");
  const name = str(user.name) ?? str(user.login) ?? "";
  // GitHub only lets a verified address be public, so the /user e-mail is a verified one
  const publicEmail = str(user.email);
  if (publicEmail) return { providerId: id, email: publicEmail, emailVerified: true, name };
  const emails = await getJson(`${base}/user/emails`, accessToken);
  const list = Array.isArray(emails) ? emails.map(obj) : [];
  const verified = list.filter((e) => e.verified === true && str(e.email));
  const chosen = verified.find((e) => e.primary === true) ?? verified[0];
  const email = chosen ? str(chosen.email) : undefined;
  return { providerId: id, email, emailVerified: email !== undefined, name };
}

export function fetchProfile(provider: OAuthProvider, config: OAuthProviderConfig, accessToken: string): Promise<OAuthProfile> {
  return provider === "google" ? googleProfile(config, accessToken) : githubProfile(config, accessToken);
}
