import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { sessionOf, useStandInSessions } from "./support/stand-in-sessions";

// CONTRACT 10: key controls on create, GET, list and PATCH; rotation with a grace period; GET /api/v1/key.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk arbitrary JSON
type Json = any;
const json = { "content-type": "application/json" };

describe("key controls (CONTRACT 10)", () => {
  let server: TestServer;
  const call = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; body: Json; headers: Headers }> => {
    const res = await fetch(`${server.url}${path}`, { method, headers: { ...headers, ...(body === undefined ? {} : json) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const createKey = async (userId: string, body: Record<string, unknown> = {}) => {
    const res = await call("POST", "/api/keys", sessionOf(userId), { name: "ci", ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string; prefix: string };
  };

  beforeAll(async () => {
    server = await startTestServer();
    useStandInSessions(server);
  });
  afterAll(async () => {
    await server.close();
  });

  const controls = {
    limit: 12.5,
    limit_reset: "monthly",
    allowed_models: ["textA-4", "textB-3-opus"],
    rate_limit: { requests_per_minute: 10, concurrent_requests: 1 },
    allowed_ips: ["127.0.0.1", "10.0.0.0/8", "2001:db8::/32"],
  };

  it("create returns the controls, GET /api/keys/{id} and the list show them with usage", async () => {
    const expiresAt = new Date(server.clock.now() + 86_400_000).toISOString();
    const created = await call("POST", "/api/keys", sessionOf("usr_c1"), { name: "agent", ...controls, expires_at: expiresAt });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ ...controls, expires_at: expiresAt, usage: { spent_period: 0, spent_total: 0, requests_total: 0 }, limit_remaining: 12.5 });
    const { id, key } = created.body as { id: string; key: string };

    const one = await call("GET", `/api/keys/${id}`, sessionOf("usr_c1"));
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      id, name: "agent", description: "", prefix: key.slice(0, 12), created_at: created.body.created_at, last_used: null, usage_count: 0,
      status: "active", ...controls, expires_at: expiresAt, usage: { spent_period: 0, spent_total: 0, requests_total: 0 }, limit_remaining: 12.5,
    });
    const list = await call("GET", "/api/keys", sessionOf("usr_c1"));
    expect(list.body.keys).toEqual([one.body]);
  });

  it("a key without controls shows them all null, reset never", async () => {
    const { id } = await createKey("usr_c2");
    const one = await call("GET", `/api/keys/${id}`, sessionOf("usr_c2"));
    expect(one.body).toMatchObject({
      limit: null, limit_reset: "never", allowed_models: null, rate_limit: null, expires_at: null, allowed_ips: null, limit_remaining: null,
    });
  });

  it("PATCH changes what it names, keeps the rest, and null clears", async () => {
    const { id } = await createKey("usr_c3", { limit: 5, limit_reset: "daily", allowed_models: ["textA-4"] });
    const patched = await call("PATCH", `/api/keys/${id}`, sessionOf("usr_c3"), { limit: 7.25, allowed_ips: ["::1"] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ limit: 7.25, limit_reset: "daily", allowed_models: ["textA-4"], allowed_ips: ["::1"], limit_remaining: 7.25 });
    const cleared = await call("PATCH", `/api/keys/${id}`, sessionOf("usr_c3"), { limit: null, limit_reset: "never", allowed_models: null, allowed_ips: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ limit: null, limit_reset: "never", allowed_models: null, allowed_ips: null, limit_remaining: null });
  });

  describe("bad input: 400 invalid_parameter naming the field, nothing changed", () => {
    const future = () => new Date(server.clock.now() + 3_600_000).toISOString();
    const cases: Array<[string, () => Record<string, unknown>, string]> = [
      ["limit 0", () => ({ limit: 0 }), "limit"],
      ["a negative limit", () => ({ limit: -1 }), "limit"],
      ["a limit with three decimals", () => ({ limit: 1.005 }), "limit"],
      ["a limit as a string", () => ({ limit: "5" }), "limit"],
      ["a reset without a limit", () => ({ limit: null, limit_reset: "daily" }), "limit_reset"],
      ["an unknown model", () => ({ allowed_models: ["textA-4", "no-such-model"] }), "allowed_models"],
      ["a malformed CIDR", () => ({ allowed_ips: ["10.0.0.0/33"] }), "allowed_ips"],
      ["a malformed IP", () => ({ allowed_ips: ["10.0.0.256"] }), "allowed_ips"],
      ["an expiry in the past", () => ({ expires_at: new Date(server.clock.now() - 1000).toISOString() }), "expires_at"],
      ["an expiry that is not ISO 8601", () => ({ expires_at: "tomorrow" }), "expires_at"],
      ["a rate limit above the plan's", () => ({ rate_limit: { requests_per_minute: 21, concurrent_requests: 1 } }), "rate_limit"],
      ["concurrency above the plan's", () => ({ rate_limit: { requests_per_minute: 5, concurrent_requests: 3 } }), "rate_limit"],
    ];
    it.each(cases)("%s", async (name, body, field) => {
      const user = `usr_bad_${name.replace(/\W/g, "_")}`;
      const res = await call("POST", "/api/keys", sessionOf(user), { name: "bad", ...body() });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_parameter");
      expect(res.body.error.message).toContain(field);

      const { id } = await createKey(user, { limit: 3, expires_at: future() });
      const before = await call("GET", `/api/keys/${id}`, sessionOf(user));
      const patched = await call("PATCH", `/api/keys/${id}`, sessionOf(user), body());
      expect(patched.status).toBe(400);
      expect(patched.body.error.code).toBe("invalid_parameter");
      expect(await call("GET", `/api/keys/${id}`, sessionOf(user))).toMatchObject({ status: 200, body: before.body });
    });

    it("another account's key: 404 key_not_found on GET, PATCH and rotate, nothing changed", async () => {
      const { id, key } = await createKey("usr_owner", { limit: 3 });
      for (const [method, path, body] of [["GET", `/api/keys/${id}`, undefined], ["PATCH", `/api/keys/${id}`, { limit: 99 }], ["POST", `/api/keys/${id}/rotate`, {}]] as const) {
        const res = await call(method, path, sessionOf("usr_intruder"), body);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe("key_not_found");
      }
      expect((await call("GET", `/api/keys/${id}`, sessionOf("usr_owner"))).body.limit).toBe(3);
      expect((await call("GET", "/v1/models", bearer(key))).status).toBe(200);
    });

    it("PATCH and rotate need a session: an API key alone is 401", async () => {
      const { id, key } = await createKey("usr_keyonly");
      expect((await call("PATCH", `/api/keys/${id}`, bearer(key), { limit: 1 })).status).toBe(401);
      expect((await call("POST", `/api/keys/${id}/rotate`, bearer(key), {})).status).toBe(401);
    });

    it("grace_seconds outside 0..86400: 400", async () => {
      const { id } = await createKey("usr_grace_bad");
      for (const grace of [-1, 86_401, 1.5, "60"]) {
        const res = await call("POST", `/api/keys/${id}/rotate`, sessionOf("usr_grace_bad"), { grace_seconds: grace });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("invalid_parameter");
      }
    });
  });

  describe("rotation", () => {
    it("201 with a new secret, same id and controls; the old secret is refused at once by default", async () => {
      const old = await createKey("usr_rot", { limit: 2, allowed_models: ["textA-4"] });
      const res = await call("POST", `/api/keys/${old.id}/rotate`, sessionOf("usr_rot"), {});
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ id: old.id, limit: 2, allowed_models: ["textA-4"], status: "active" });
      expect(res.body.key).not.toBe(old.key);
      expect(res.body.prefix).toBe(res.body.key.slice(0, 12));
      expect((await call("GET", "/v1/models", bearer(res.body.key))).status).toBe(200);
      const refused = await call("GET", "/v1/models", bearer(old.key));
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe("invalid_api_key");
      const listed = await call("GET", "/api/keys", sessionOf("usr_rot"));
      expect(listed.body.keys.map((k: { id: string; prefix: string }) => [k.id, k.prefix])).toEqual([[old.id, res.body.prefix]]);
    });

    it("a rotation without a body takes the defaults", async () => {
      const old = await createKey("usr_rot_nobody");
      const res = await fetch(`${server.url}/api/keys/${old.id}/rotate`, { method: "POST", headers: sessionOf("usr_rot_nobody") });
      expect(res.status).toBe(201);
      expect((await call("GET", "/v1/models", bearer(old.key))).status).toBe(401);
    });

    it("grace_seconds: the old secret keeps working that long, then is refused", async () => {
      const old = await createKey("usr_rot_grace");
      const res = await call("POST", `/api/keys/${old.id}/rotate`, sessionOf("usr_rot_grace"), { grace_seconds: 60 });
      expect(res.status).toBe(201);
      const viaOld = await call("GET", "/api/v1/key", bearer(old.key));
      expect(viaOld.status).toBe(200);
      expect(viaOld.body.id).toBe(old.id);
      expect((await call("GET", "/v1/models", bearer(res.body.key))).status).toBe(200);
      server.clock.advance(59_000);
      expect((await call("GET", "/v1/models", bearer(old.key))).status).toBe(200);
      server.clock.advance(1_000);
      expect((await call("GET", "/v1/models", bearer(old.key))).status).toBe(401);
      expect((await call("GET", "/v1/models", bearer(res.body.key))).status).toBe(200);
    });
  });

  describe("GET /api/v1/key", () => {
    it("the calling key as one object, never its secret", async () => {
      const created = await createKey("usr_self", { limit: 4, limit_reset: "weekly", allowed_ips: ["127.0.0.1"] });
      const res = await call("GET", "/api/v1/key", bearer(created.key));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: created.id, prefix: created.prefix, limit: 4, limit_reset: "weekly", allowed_ips: ["127.0.0.1"], limit_remaining: 4 });
      expect(res.body.key).toBeUndefined();
      expect(JSON.stringify(res.body)).not.toContain(created.key);
    });

    it("a session alone is 401; an unknown key 401 invalid_api_key", async () => {
      expect((await call("GET", "/api/v1/key", sessionOf("usr_self"))).status).toBe(401);
      const res = await call("GET", "/api/v1/key", bearer(`ak-live-${"0".repeat(33)}` /* a well-formed key that no account has */));
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("invalid_api_key");
    });
  });
});
