import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { call, login, PASSWORD, sessionCookie, signup, tokenFromMail, uniqueEmail } from "./auth-helpers";

const rateLimited = { error: { message: expect.any(String), type: "rate_limit_error", code: "auth_rate_limit" } };

// Each limit gets its own server: every request of a suite comes from 127.0.0.1, so one IP-keyed limit
// would otherwise be spent by another test's set-up.
describe("authentication rate limits (SPEC 8 defaults)", () => {
  const servers: TestServer[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const server = await startTestServer({ env });
    servers.push(server);
    return server;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it("allows 5 registrations per hour per IP, then 429 auth_rate_limit with Retry-After", async () => {
    const server = await start();
    for (let i = 0; i < 5; i++) await signup(server, uniqueEmail("reg"));
    const res = await call(server, "POST", "/api/auth/signup", { body: { email: uniqueEmail("reg"), password: PASSWORD, name: "Six" } });
    expect(res.status).toBe(429);
    expect(res.body).toEqual(rateLimited);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(3500);
  });

  it("allows 10 logins per hour per IP", async () => {
    const server = await start();
    const email = uniqueEmail("ip");
    await signup(server, email);
    for (let i = 0; i < 10; i++) {
      const res = await call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } });
      expect(res.status).toBe(200);
    }
    const res = await call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } });
    expect(res.status).toBe(429);
    expect(res.body).toEqual(rateLimited);
  });

  it("allows 3 password reset requests per hour per e-mail", async () => {
    const server = await start();
    const email = uniqueEmail("reset");
    for (let i = 0; i < 3; i++) expect((await call(server, "POST", "/api/auth/password-reset", { body: { email } })).status).toBe(200);
    const res = await call(server, "POST", "/api/auth/password-reset", { body: { email } });
    expect(res.status).toBe(429);
    expect(res.body).toEqual(rateLimited);
    const other = await call(server, "POST", "/api/auth/password-reset", { body: { email: uniqueEmail("reset") } });
    expect(other.status).toBe(200);
  });

  it("tells accepted sign-ups, logins, resets and resends where their limit stands (X-RateLimit-*)", async () => {
    const server = await start();
    const before = Math.floor(Date.now() / 1000);
    const limitOf = (res: Awaited<ReturnType<typeof call>>) => ({
      limit: res.headers.get("x-ratelimit-limit"),
      remaining: res.headers.get("x-ratelimit-remaining"),
      reset: Number(res.headers.get("x-ratelimit-reset")),
    });
    const email = uniqueEmail("hdr");
    const created = await signup(server, email);
    expect(limitOf(created)).toEqual({ limit: "5", remaining: "4", reset: expect.any(Number) });
    expect(limitOf(created).reset).toBeGreaterThanOrEqual(before + 3600);

    const ok = await call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } });
    expect(ok.status).toBe(200);
    expect(limitOf(ok)).toMatchObject({ limit: "10", remaining: "9" });
    const wrong = await call(server, "POST", "/api/auth/login", { body: { email, password: "Wrong-Pass-93" } });
    expect(wrong.status).toBe(401);
    expect(limitOf(wrong)).toMatchObject({ limit: "10", remaining: "8" });

    const reset = await call(server, "POST", "/api/auth/password-reset", { body: { email } });
    expect(reset.status).toBe(200);
    expect(limitOf(reset)).toMatchObject({ limit: "3", remaining: "2" });

    const resend = await call(server, "POST", "/api/auth/resend-verification", { cookie: sessionCookie(ok.headers) });
    expect(resend.status).toBe(200);
    expect(limitOf(resend)).toMatchObject({ limit: "3", remaining: "2" });
  });
});

describe("GET /api/auth/me rate limit (LIMIT_AUTH_ME)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { LIMIT_AUTH_ME: "3/60" } });
  });
  afterAll(async () => {
    await server.close();
  });

  it("counts per account with X-RateLimit-* headers, then 429 rate_limit_exceeded with Retry-After", async () => {
    const email = uniqueEmail("me");
    await signup(server, email);
    const cookie = await login(server, email);
    for (let i = 0; i < 3; i++) {
      const res = await call(server, "GET", "/api/auth/me", { cookie });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("3");
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(2 - i));
    }
    const res = await call(server, "GET", "/api/auth/me", { cookie });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: { message: expect.stringMatching(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/), type: "rate_limit_error", code: "rate_limit_exceeded" } });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    // another account has its own budget
    const other = uniqueEmail("me2");
    await signup(server, other);
    expect((await call(server, "GET", "/api/auth/me", { cookie: await login(server, other) })).status).toBe(200);
  });
});

describe("per-account login throttling", () => {
  let server: TestServer;
  beforeAll(async () => {
    // a three-second window: short enough to watch the account open again, long enough that four argon2 checks fit in it on a loaded machine
    server = await startTestServer({ env: { LIMIT_LOGIN_ACCOUNT: "3/3" } });
  });
  afterAll(async () => {
    await server.close();
  });

  it("blocks every attempt on an account after repeated failures, answers others normally, and reopens after the window", async () => {
    const email = uniqueEmail("throttle");
    const bystander = uniqueEmail("bystander");
    await signup(server, email);
    await signup(server, bystander);
    const attempt = (who: string, password: string) => call(server, "POST", "/api/auth/login", { body: { email: who, password } });
    for (let i = 0; i < 3; i++) expect((await attempt(email, "Wrong-Pass-123")).status).toBe(401);
    // even the right password waits: otherwise the throttle would still confirm guesses
    const blocked = await attempt(email, PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual(rateLimited);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await attempt(bystander, PASSWORD)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 3_100));
    expect((await attempt(email, PASSWORD)).status).toBe(200);
  });

  it.each([
    ["POST /api/auth/change-password", (cookie: string, password: string) =>
      call(server, "POST", "/api/auth/change-password", { cookie, body: { current_password: password, new_password: "Fresh-Lamp-73" } })],
    ["DELETE /api/auth/me", (cookie: string, password: string) =>
      call(server, "DELETE", "/api/auth/me", { cookie, body: { password } })],
  ])("throttles wrong passwords on %s with the account's login budget (no password oracle for a session)", async (_route, attempt) => {
    const email = uniqueEmail("oracle");
    await signup(server, email);
    const cookie = await login(server, email);
    for (let i = 0; i < 3; i++) {
      const res = await attempt(cookie, `Guess-${i}-Lamp-9`);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("invalid_credentials");
    }
    const blocked = await attempt(cookie, PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual(rateLimited);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // one budget: the guesses made through the session also hold logins back
    expect((await call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } })).status).toBe(429);
    await new Promise((r) => setTimeout(r, 3_100));
    expect((await attempt(cookie, PASSWORD)).status).toBe(200);
  });
});

describe("per-account login throttling and password reset", () => {
  let server: TestServer;
  beforeAll(async () => {
    // a long window: only the reset can open the account again within the test
    server = await startTestServer({ env: { LIMIT_LOGIN_ACCOUNT: "3/600", LIMIT_LOGIN_IP: "1000/3600" } });
  });
  afterAll(async () => {
    await server.close();
  });

  it("holds concurrent guesses to the account's budget: of 20 wrong passwords sent at once 3 are tried, 17 get 429", async () => {
    const email = uniqueEmail("burst");
    await signup(server, email);
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      call(server, "POST", "/api/auth/login", { body: { email, password: `Guess-${i}-Lamp-9` } })));
    const statuses = burst.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(3).fill(401), ...Array(17).fill(429)]);
    for (const res of burst.filter((r) => r.status === 429)) expect(res.body).toEqual(rateLimited);
    expect((await call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } })).status).toBe(429);
  });

  it("does not count a right password against the budget", async () => {
    const email = uniqueEmail("right");
    await signup(server, email);
    for (let i = 0; i < 5; i++) expect((await call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call(server, "POST", "/api/auth/login", { body: { email, password: `Guess-${i}-Lamp-9` } })).status).toBe(401);
    expect((await call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } })).status).toBe(429);
  });

  it("lets the owner log in with the new password after a completed reset, however others locked the account", async () => {
    const email = uniqueEmail("locked");
    await signup(server, email);
    const attempt = (password: string) => call(server, "POST", "/api/auth/login", { body: { email, password } });
    for (let i = 0; i < 3; i++) expect((await attempt(`Guess-${i}-Lamp-9`)).status).toBe(401);
    expect((await attempt(PASSWORD)).status).toBe(429);
    expect((await call(server, "POST", "/api/auth/password-reset", { body: { email } })).status).toBe(200);
    // the mail is sent after the answer (vi.waitFor's default 1 s is no bound for a loaded machine)
    const token = await vi.waitFor(() => tokenFromMail(server, email, "reset-password"), { timeout: 10_000, interval: 50 });
    const newPassword = "Brand-New-Lamp-84";
    expect((await call(server, "POST", "/api/auth/password-reset/confirm", { body: { token, password: newPassword } })).status).toBe(200);
    const ok = await attempt(newPassword);
    expect(ok.status).toBe(200);
    expect(sessionCookie(ok.headers)).toBeTruthy();
    // the throttle counts afresh: wrong guesses lock the account again
    for (let i = 0; i < 3; i++) expect((await attempt(`Guess-${i}-Lamp-9`)).status).toBe(401);
    expect((await attempt(newPassword)).status).toBe(429);
  });
});
