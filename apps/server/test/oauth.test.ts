import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeOAuth, type FakeOAuthServer } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { call, cookieFrom, login, RELAXED_LIMITS, sessionCookie, signup, uniqueEmail, verifiedUser } from "./auth-helpers";

describe("OAuth sign-in (Google, GitHub) against a local fake provider", () => {
  let fake: FakeOAuthServer;
  let server: TestServer;
  beforeAll(async () => {
    fake = await startFakeOAuth();
    server = await startTestServer({ env: { ...RELAXED_LIMITS, ...fake.env } });
  });
  afterAll(async () => {
    await server.close();
    await fake.close();
  });

  /** Starts the flow: our 302 to the provider, and the state cookie it set. */
  async function begin(provider: string): Promise<{ location: URL; stateCookie: string }> {
    const res = await fetch(`${server.url}/api/auth/oauth/${provider}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    const stateCookie = cookieFrom(res.headers, "gw_oauth");
    if (!stateCookie) throw new Error("no state cookie");
    return { location: new URL(res.headers.get("location") ?? ""), stateCookie };
  }

  /** The provider's consent step: its 302 back to our callback, re-aimed at the test server. */
  async function consent(authorizeUrl: URL): Promise<string> {
    const res = await fetch(authorizeUrl, { redirect: "manual" });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get("location") ?? "");
    expect(`${back.origin}${back.pathname}`).toBe(`${server.config.publicUrl}/api/auth/callback`);
    return `${server.url}${back.pathname}${back.search}`;
  }

  async function callback(url: string, stateCookie?: string): Promise<Response> {
    return fetch(url, { redirect: "manual", headers: stateCookie ? { cookie: stateCookie } : {} });
  }

  async function roundTrip(provider: "google" | "github"): Promise<{ res: Response; cookie?: string }> {
    const { location, stateCookie } = await begin(provider);
    const res = await callback(await consent(location), stateCookie);
    return { res, cookie: sessionCookie(res.headers) };
  }

  it("redirects to Google with state, S256 PKCE, scopes and the callback URI", async () => {
    const { location, stateCookie } = await begin("google");
    expect(`${location.origin}${location.pathname}`).toBe(`${fake.url}/google/authorize`);
    const q = location.searchParams;
    expect(q.get("client_id")).toBe("google-client-id");
    expect(q.get("response_type")).toBe("code");
    expect(q.get("redirect_uri")).toBe(`${server.config.publicUrl}/api/auth/callback`);
    expect(q.get("state")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("scope")).toContain("email");
    expect(stateCookie).toMatch(/^gw_oauth=/);
  });

  it("completes a Google round trip: 302 /dashboard, a session, a verified account", async () => {
    fake.google.profile = { sub: "g-round-trip", email: "Ada.Google@Example.com", email_verified: true, name: "Ada G" };
    const { res, cookie } = await roundTrip("google");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/dashboard");
    const tokenRequest = fake.tokenRequests.at(-1);
    expect(tokenRequest?.form.get("code_verifier")).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    const me = await call(server, "GET", "/api/auth/me", { cookie });
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ email: "ada.google@example.com", name: "Ada G", email_verified: true });
    // the same Google account signs in to the same user next time
    const again = await roundTrip("google");
    const me2 = await call(server, "GET", "/api/auth/me", { cookie: again.cookie });
    expect(me2.body.user.id).toBe(me.body.user.id);
  });

  it("completes a GitHub round trip, reading the primary verified e-mail from /user/emails", async () => {
    fake.github.profile = {
      user: { id: 9001, login: "octo", name: null, email: null },
      emails: [
        { email: "unverified@example.com", primary: false, verified: false },
        { email: "octo-primary@example.com", primary: true, verified: true },
      ],
    };
    const { res, cookie } = await roundTrip("github");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/dashboard");
    const me = await call(server, "GET", "/api/auth/me", { cookie });
    expect(me.body.user).toMatchObject({ email: "octo-primary@example.com", name: "octo", email_verified: true });
  });

  it("two first sign-ins of one new person at once (two devices) end in one account, both signed in", async () => {
    fake.google.profile = { sub: "g-twice-at-once", email: uniqueEmail("twice"), email_verified: true, name: "Twice" };
    const flows = await Promise.all([begin("google"), begin("google")]);
    const urls = await Promise.all(flows.map(({ location }) => consent(location)));
    const answers = await Promise.all(urls.map((url, i) => callback(url, flows[i]?.stateCookie)));
    expect(answers.map((res) => [res.status, res.headers.get("location")])).toEqual([[302, "/dashboard"], [302, "/dashboard"]]);
    const ids = await Promise.all(answers.map(async (res) => (await call(server, "GET", "/api/auth/me", { cookie: sessionCookie(res.headers) })).body.user.id as string));
    expect(ids[0]).toBe(ids[1]);
  });

  it("links a provider-verified e-mail to the existing password account", async () => {
    const email = uniqueEmail("link");
    const created = await signup(server, email);
    fake.google.profile = { sub: "g-link", email, email_verified: true, name: "Linked" };
    const { cookie } = await roundTrip("google");
    const me = await call(server, "GET", "/api/auth/me", { cookie });
    expect(me.body.user.id).toBe(created.body.user.id);
    expect(me.body.user.email_verified).toBe(true);
  });

  it("linking an account whose e-mail was never verified drops the password and sessions of whoever signed it up", async () => {
    // someone signs up with the victim's address and a password of their own, and stays logged in
    const email = uniqueEmail("prehijack");
    const created = await signup(server, email, "Mallory-Pass-77");
    const squatterCookie = await login(server, email, "Mallory-Pass-77");
    // the owner of the address signs in with Google, which vouches for it
    fake.google.profile = { sub: "g-prehijack", email, email_verified: true, name: "Victim" };
    const { cookie } = await roundTrip("google");
    const me = await call(server, "GET", "/api/auth/me", { cookie });
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ id: created.body.user.id, email_verified: true });
    // the squatter is out: the unproven password no longer logs in, the old session is revoked
    const squatterLogin = await call(server, "POST", "/api/auth/login", { body: { email, password: "Mallory-Pass-77" } });
    expect(squatterLogin.status).toBe(401);
    expect(squatterLogin.body).toEqual({ error: { message: "Invalid e-mail or password.", type: "authentication_error", code: "invalid_credentials" } });
    const squatterMe = await call(server, "GET", "/api/auth/me", { cookie: squatterCookie });
    expect(squatterMe.status).toBe(401);
    expect(squatterMe.body).toMatchObject({ error: { code: "unauthorized" } });
    // the owner's own session keeps working
    expect((await call(server, "GET", "/api/auth/me", { cookie })).status).toBe(200);
  });

  it("linking an already verified account keeps its password and sessions", async () => {
    const { email, cookie: ownerCookie } = await verifiedUser(server);
    fake.google.profile = { sub: "g-link-verified", email, email_verified: true, name: "Owner" };
    const { cookie } = await roundTrip("google");
    expect((await call(server, "GET", "/api/auth/me", { cookie })).status).toBe(200);
    expect((await call(server, "GET", "/api/auth/me", { cookie: ownerCookie })).status).toBe(200);
    expect(await login(server, email)).toMatch(/^gw_session=/);
  });

  it("creates the account under the sign-up name rules: control characters out, a blank name becomes the address's local part", async () => {
    fake.google.profile = { sub: "g-ctrl-name", email: uniqueEmail("ctrl"), email_verified: true, name: "Ada\u0000\nLovelace" };
    const first = await roundTrip("google");
    expect((await call(server, "GET", "/api/auth/me", { cookie: first.cookie })).body.user.name).toBe("Ada Lovelace");
    const email = uniqueEmail("blankname");
    fake.google.profile = { sub: "g-blank-name", email, email_verified: true, name: "\u200b \t" };
    const second = await roundTrip("google");
    expect((await call(server, "GET", "/api/auth/me", { cookie: second.cookie })).body.user.name).toBe(email.split("@")[0]);
  });

  it("refuses an address the provider sends that is not one: /login?error=email_unavailable, no account", async () => {
    fake.google.profile = { sub: "g-bad-email", email: "not-an-email", email_verified: true, name: "Bad" };
    const { res, cookie } = await roundTrip("google");
    expect(res.headers.get("location")).toBe("/login?error=email_unavailable");
    expect(cookie).toBeUndefined();
  });

  it("does not link an existing account through an unverified provider e-mail", async () => {
    const email = uniqueEmail("nolink");
    await signup(server, email);
    fake.google.profile = { sub: "g-unverified", email, email_verified: false, name: "Mallory" };
    const { res, cookie } = await roundTrip("google");
    expect(res.headers.get("location")).toBe("/login?error=account_exists");
    expect(cookie).toBeUndefined();
  });

  it("linking an unverified account through another provider also unlinks the identity that created it", async () => {
    // a Google account that does not prove the address creates an (unverified) account for it
    const email = uniqueEmail("squat");
    fake.google.profile = { sub: "g-squatter", email, email_verified: false, name: "Mallory" };
    const squatter = await roundTrip("google");
    expect(squatter.res.headers.get("location")).toBe("/dashboard");
    // the owner proves the address through GitHub: the account is theirs now
    fake.github.profile = { user: { id: 77001, login: "owner", name: "Owner", email }, emails: [] };
    const owner = await roundTrip("github");
    expect((await call(server, "GET", "/api/auth/me", { cookie: owner.cookie })).body.user).toMatchObject({ email, email_verified: true });
    // the unproven Google identity no longer signs in to it
    const again = await roundTrip("google");
    expect(again.res.headers.get("location")).toBe("/login?error=account_exists");
    expect(again.cookie).toBeUndefined();
  });

  it("verifies an account made through an unverified provider e-mail once the provider vouches for it", async () => {
    const email = uniqueEmail("laterverified");
    fake.google.profile = { sub: "g-later-verified", email, email_verified: false, name: "Later" };
    const first = await roundTrip("google");
    const before = await call(server, "GET", "/api/auth/me", { cookie: first.cookie });
    expect(before.body.user).toMatchObject({ email, email_verified: false });
    fake.google.profile = { sub: "g-later-verified", email, email_verified: true, name: "Later" };
    const second = await roundTrip("google");
    const after = await call(server, "GET", "/api/auth/me", { cookie: second.cookie });
    expect(after.body.user).toMatchObject({ id: before.body.user.id, email_verified: true });
  });

  it("fails a mismatched state with /login?error=invalid_state", async () => {
    const { location, stateCookie } = await begin("google");
    const url = new URL(await consent(location));
    url.searchParams.set("state", "forged-state");
    const res = await callback(url.toString(), stateCookie);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login?error=invalid_state");
    expect(sessionCookie(res.headers)).toBeUndefined();
  });

  it("fails without the state cookie, and when a state is replayed", async () => {
    fake.google.profile = { sub: "g-replay", email: uniqueEmail("replay"), email_verified: true, name: "R" };
    const { location, stateCookie } = await begin("google");
    const url = await consent(location);
    const noCookie = await callback(url);
    expect(noCookie.headers.get("location")).toBe("/login?error=invalid_state");
    const first = await callback(url, stateCookie);
    expect(first.headers.get("location")).toBe("/dashboard");
    const replay = await callback(url, stateCookie);
    expect(replay.headers.get("location")).toBe("/login?error=invalid_state");
  });

  it("fails an expired state", async () => {
    const { location, stateCookie } = await begin("github");
    const url = await consent(location);
    server.clock.advance(11 * 60 * 1000);
    const res = await callback(url, stateCookie);
    expect(res.headers.get("location")).toBe("/login?error=invalid_state");
  });

  it("a HEAD of the callback neither uses up the state nor signs in: 404, then the GET completes", async () => {
    fake.google.profile = { sub: "g-head", email: uniqueEmail("head"), email_verified: true, name: "Head" };
    const { location, stateCookie } = await begin("google");
    const url = await consent(location);
    const head = await fetch(url, { method: "HEAD", redirect: "manual", headers: { cookie: stateCookie } });
    expect(head.status).toBe(404);
    expect(sessionCookie(head.headers)).toBeUndefined();
    const res = await callback(url, stateCookie);
    expect(res.headers.get("location")).toBe("/dashboard");
    expect(sessionCookie(res.headers)).toBeDefined();
  });

  it("forgets used states once their cookies have expired (a replay is refused by the cookie's expiry by then)", async () => {
    fake.google.profile = { sub: "g-prune", email: uniqueEmail("prune"), email_verified: true, name: "Prune" };
    const uses = server.db.connection.collection("oauth_state_uses");
    await roundTrip("google");
    expect(await uses.countDocuments()).toBeGreaterThan(0);
    server.clock.advance(11 * 60 * 1000);
    const { res } = await roundTrip("google");
    expect(res.headers.get("location")).toBe("/dashboard");
    // pruned in the background: vi.waitFor's default 1 s is no bound for a loaded machine
    await vi.waitFor(async () => expect(await uses.countDocuments()).toBe(1), { timeout: 10_000, interval: 50 });
  });

  it("reports a refused code exchange as /login?error=oauth_failed", async () => {
    const { stateCookie, location } = await begin("google");
    const state = location.searchParams.get("state") ?? "";
    const res = await callback(`${server.url}/api/auth/callback?code=bogus&state=${state}`, stateCookie);
    expect(res.headers.get("location")).toBe("/login?error=oauth_failed");
  });

  it("passes on a denied consent as /login?error=access_denied", async () => {
    const { stateCookie, location } = await begin("github");
    const state = location.searchParams.get("state") ?? "";
    const res = await callback(`${server.url}/api/auth/callback?error=access_denied&state=${state}`, stateCookie);
    expect(res.headers.get("location")).toBe("/login?error=access_denied");
  });

  it("redirects an unknown provider to /login?error=unsupported_provider", async () => {
    const res = await fetch(`${server.url}/api/auth/oauth/microsoft`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login?error=unsupported_provider");
  });
});

describe("OAuth without client ids", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("redirects to /login?error=provider_not_configured", async () => {
    for (const provider of ["google", "github"]) {
      const res = await fetch(`${server.url}/api/auth/oauth/${provider}`, { redirect: "manual" });
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe("/login?error=provider_not_configured");
    }
  });
});

/** An answer that sends its status line and "{", then a space a second, never ending. */
function drip(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.write("{");
  const timer = setInterval(() => res.write(" "), 1_000);
  res.on("close", () => clearInterval(timer));
}

/**
 * The fake provider, with some of its endpoints served instead by `answer` (`endpoints` names them, given the base
 * URL of that server), and a gateway using both. `stand.server` is set before the tests run.
 */
function brokenProviderStand(answer: (req: IncomingMessage, res: ServerResponse) => void, endpoints: (base: string) => Record<string, string>): { server: TestServer } {
  const stand = {} as { server: TestServer };
  let fake: FakeOAuthServer;
  let broken: Server;
  beforeAll(async () => {
    fake = await startFakeOAuth();
    broken = createServer(answer);
    await new Promise<void>((resolve) => broken.listen(0, "127.0.0.1", resolve));
    stand.server = await startTestServer({ env: { ...RELAXED_LIMITS, ...fake.env, ...endpoints(`http://127.0.0.1:${(broken.address() as AddressInfo).port}`) } });
  });
  afterAll(async () => {
    await stand.server.close();
    broken.closeAllConnections();
    await new Promise<void>((resolve) => broken.close(() => resolve()));
    await fake.close();
  });
  return stand;
}

/** Google and GitHub sign-ins, each reaching the callback as `toCallback` says, all ending in oauth_failed within 15 s. */
async function expectBothFail(server: TestServer, toCallback: (begun: Response) => Promise<string>): Promise<void> {
  const answers = await Promise.all((["google", "github"] as const).map(async (provider) => {
    const begun = await fetch(`${server.url}/api/auth/oauth/${provider}`, { redirect: "manual" });
    const stateCookie = cookieFrom(begun.headers, "gw_oauth") ?? "";
    const url = await toCallback(begun);
    const started = Date.now();
    const res = await fetch(url, { redirect: "manual", headers: { cookie: stateCookie }, signal: AbortSignal.timeout(20_000) });
    return { provider, res, elapsed: Date.now() - started };
  }));
  for (const { provider, res, elapsed } of answers) {
    expect(res.status, provider).toBe(302);
    expect(res.headers.get("location"), provider).toBe("/login?error=oauth_failed");
    expect(sessionCookie(res.headers), provider).toBeUndefined();
    expect(elapsed, provider).toBeLessThan(15_000);
  }
}

describe("OAuth against a provider whose token endpoint stalls", () => {
  // Google's token endpoint never answers; GitHub's drips
  const stand = brokenProviderStand((req, res) => {
    if (req.url?.startsWith("/github")) drip(res);
  }, (base) => ({ GOOGLE_TOKEN_URL: `${base}/google/token`, GITHUB_TOKEN_URL: `${base}/github/token` }));

  it("gives up on the code exchange after 10 s: 302 /login?error=oauth_failed, no session", async () => {
    await expectBothFail(stand.server, async (begun) => {
      const state = new URL(begun.headers.get("location") ?? "").searchParams.get("state") ?? "";
      return `${stand.server.url}/api/auth/callback?code=abc&state=${state}`;
    });
  }, 30_000);
});

describe("OAuth against a provider whose profile answers are broken", () => {
  // Google's userinfo drips; GitHub's /user is not JSON
  const stand = brokenProviderStand((req, res) => {
    if (req.url?.startsWith("/google")) {
      drip(res);
      return;
    }
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<html>Service Unavailable</html>");
  }, (base) => ({ GOOGLE_USERINFO_URL: `${base}/google/userinfo`, GITHUB_API_URL: `${base}/github/api` }));

  it("ends a stalled or unreadable profile answer with /login?error=oauth_failed", async () => {
    await expectBothFail(stand.server, async (begun) => {
      const consent = await fetch(begun.headers.get("location") ?? "", { redirect: "manual" });
      const back = new URL(consent.headers.get("location") ?? "");
      return `${stand.server.url}${back.pathname}${back.search}`;
    });
  }, 30_000);
});
