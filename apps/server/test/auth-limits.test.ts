import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { call, PASSWORD, signup, uniqueEmail } from "./auth-helpers";

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
});

describe("per-account login throttling", () => {
  let server: TestServer;
  beforeAll(async () => {
    // a one-second window so the test can watch the account open again
    server = await startTestServer({ env: { LIMIT_LOGIN_ACCOUNT: "3/1" } });
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
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await attempt(email, PASSWORD)).status).toBe(200);
  });
});
