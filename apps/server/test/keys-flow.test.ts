import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, login, RELAXED_LIMITS, signup, verifiedUser } from "./auth-helpers";
import { startTestServer, type TestServer } from "./harness";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk arbitrary JSON
type JsonResponse = Omit<Response, "json"> & { json(): Promise<any> };
const http = (input: string, init?: RequestInit): Promise<JsonResponse> => fetch(input, init);

// The "done when" flow with real accounts and sessions: sign up → verify → log in → create key → use it →
// list → revoke → the key is refused.
describe("API keys with real sessions", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: RELAXED_LIMITS });
  });
  afterAll(async () => {
    await server.close();
  });

  it("create → use → list shows last_used → revoke → refused with 401 invalid_api_key", async () => {
    const user = await verifiedUser(server);
    const created = await call(server, "POST", "/api/keys", { cookie: user.cookie, body: { name: "flow", description: "e2e" } });
    expect(created.status).toBe(201);
    const key = created.body.key as string;

    const used = await http(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(used.status).toBe(200);

    let listed = await call(server, "GET", "/api/keys", { cookie: user.cookie });
    const deadline = Date.now() + 5000;
    while (listed.body.keys[0]?.usage_count !== 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      listed = await call(server, "GET", "/api/keys", { cookie: user.cookie });
    }
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      keys: [{ id: created.body.id, name: "flow", prefix: key.slice(0, 12), created_at: created.body.created_at,
        last_used: expect.any(String), usage_count: 1, status: "active", description: "e2e",
        limit: null, limit_reset: "never", allowed_models: null, rate_limit: null, expires_at: null, allowed_ips: null,
        usage: { spent_period: 0, spent_total: 0, requests_total: 0 }, limit_remaining: null }],
      total: 1,
    });

    const revoked = await call(server, "DELETE", `/api/keys/${created.body.id}`, { cookie: user.cookie });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ success: true, message: expect.any(String), id: created.body.id });

    const refused = await http(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.code).toBe("invalid_api_key");
    expect((await call(server, "GET", "/api/keys", { cookie: user.cookie })).body).toEqual({ keys: [], total: 0 });
  });

  it("an unverified account can list but not create keys", async () => {
    const email = `unverified-${Date.now()}@example.com`;
    await signup(server, email);
    const cookie = await login(server, email);
    expect((await call(server, "GET", "/api/keys", { cookie })).status).toBe(200);
    const res = await call(server, "POST", "/api/keys", { cookie, body: { name: "x" } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("email_not_verified");
  });

  it("another user's key cannot be revoked (404) and keeps working", async () => {
    const owner = await verifiedUser(server);
    const intruder = await verifiedUser(server);
    const created = await call(server, "POST", "/api/keys", { cookie: owner.cookie, body: { name: "mine" } });
    const res = await call(server, "DELETE", `/api/keys/${created.body.id}`, { cookie: intruder.cookie });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("key_not_found");
    const still = await http(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${created.body.key}` } });
    expect(still.status).toBe(200);
  });

  it("the session cookie replayed after logout gets 401 on key routes", async () => {
    const user = await verifiedUser(server);
    expect((await call(server, "POST", "/api/auth/logout", { cookie: user.cookie })).status).toBe(200);
    const res = await call(server, "GET", "/api/keys", { cookie: user.cookie });
    expect(res.status).toBe(401);
    expect(["unauthorized", "session_expired"]).toContain(res.body.error.code);
  });

  it("account deletion revokes the account's keys", async () => {
    const user = await verifiedUser(server);
    const created = await call(server, "POST", "/api/keys", { cookie: user.cookie, body: { name: "doomed" } });
    const deleted = await call(server, "DELETE", "/api/auth/me", { cookie: user.cookie, body: { password: "Quartz-Lamp-92" } });
    expect(deleted.status).toBe(200);
    const refused = await http(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${created.body.key}` } });
    expect(refused.status).toBe(401);
  });
});
