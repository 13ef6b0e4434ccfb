import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { credit } from "./support/gateway-fixtures";
import { call, login, mailsTo, PASSWORD, RELAXED_LIMITS, signup, uniqueEmail, verifiedUser } from "./auth-helpers";
import { holdPoint } from "./support/hold-point";

describe("account deletion (DELETE /api/auth/me)", () => {
  let server: TestServer;
  let fakes: FakeUpstreams;
  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    server = await startTestServer({ env: { ...RELAXED_LIMITS, ...fakes.env } });
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  it("revokes keys and sessions, runs the account hooks, anonymizes the user, and the e-mail can sign up again", async () => {
    const { email, cookie, id } = await verifiedUser(server);
    const otherSession = await login(server, email);
    const created = await call(server, "POST", "/api/keys", { cookie, body: { name: "doomed" } });
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    const deletedIds: string[] = [];
    server.app.context.accountHooks.onAccountDeleted((userId) => {
      deletedIds.push(userId);
    });

    const res = await call(server, "DELETE", "/api/auth/me", { cookie, body: { password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.any(String) });
    expect(res.headers.getSetCookie().find((c) => c.startsWith("gw_session="))).toMatch(/Max-Age=0/);
    expect(deletedIds).toEqual([id]);

    for (const session of [cookie, otherSession]) {
      const me = await call(server, "GET", "/api/auth/me", { cookie: session });
      expect(me.status).toBe(401);
    }
    const withKey = await call(server, "GET", "/api/billing/credits", { headers: { authorization: `Bearer ${key}` } });
    expect(withKey.status).toBe(401);
    const relogin = await call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } });
    expect(relogin.status).toBe(401);

    const again = await signup(server, email);
    expect(again.body.user.id).not.toBe(id);
    expect(again.body.user.email).toBe(email);
  });

  it("deletes the answers stored for Idempotency-Key replays (they hold prompts and outputs), and only the user's", async () => {
    const stored = (userId: string) => server.db.connection.collection<{ _id: string }>("gateway_idempotency").countDocuments({ _id: { $regex: `^${userId}:` } });
    const withReplay = async () => {
      const { cookie, id } = await verifiedUser(server);
      const created = await call(server, "POST", "/api/keys", { cookie, body: { name: "replays" } });
      await credit(server, id, 1);
      const task = await fetch(`${server.url}/api/v1/task`, {
        method: "POST",
        headers: { authorization: `Bearer ${created.body.key as string}`, "content-type": "application/json", "idempotency-key": "private-prompt" },
        body: JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "my secret" }], max_tokens: 5 }),
      });
      expect(task.status).toBe(200);
      await task.text();
      expect(await stored(id)).toBe(1);
      return { cookie, id };
    };
    const leaving = await withReplay();
    const staying = await withReplay();
    const res = await call(server, "DELETE", "/api/auth/me", { cookie: leaving.cookie, body: { password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(await stored(leaving.id)).toBe(0);
    expect(await stored(staying.id)).toBe(1);
  });

  it("needs the password of a password account: missing → 400, wrong → 401, nothing deleted", async () => {
    const email = uniqueEmail("del");
    await signup(server, email);
    const cookie = await login(server, email);
    const missing = await call(server, "DELETE", "/api/auth/me", { cookie });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("missing_required_parameter");
    const wrong = await call(server, "DELETE", "/api/auth/me", { cookie, body: { password: "Wrong-Pass-123" } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe("invalid_credentials");
    const typed = await call(server, "DELETE", "/api/auth/me", { cookie, body: { password: { $ne: null } } });
    expect(typed.status).toBe(400);
    expect(typed.body.error.code).toBe("invalid_parameter");
    const bad = await call(server, "DELETE", "/api/auth/me", { cookie, raw: "{nope" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_json");
    expect((await call(server, "GET", "/api/auth/me", { cookie })).status).toBe(200);
    expect(mailsTo(server, email)).toHaveLength(1);
  });

  it("holds its body to the REST rules: another content type 415, a NUL character or an array 400 invalid_parameter, nothing deleted or counted", async () => {
    const email = uniqueEmail("delbody");
    await signup(server, email);
    const cookie = await login(server, email);
    const text = await call(server, "DELETE", "/api/auth/me", { cookie, raw: `password=${PASSWORD}`, headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect(text.body).toEqual({ error: { message: "Unsupported Content-Type: send application/json.", type: "invalid_request_error", code: "unsupported_media_type" } });
    const form = await call(server, "DELETE", "/api/auth/me", { cookie, raw: `password=${PASSWORD}`, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(form.status).toBe(415);
    // a NUL is refused before the password check, so it never counts as a wrong password against the login throttle
    for (let i = 0; i < 6; i++) {
      const nul = await call(server, "DELETE", "/api/auth/me", { cookie, body: { password: `${PASSWORD}\u0000` } });
      expect(nul.status).toBe(400);
      expect(nul.body).toEqual({ error: { message: "Invalid parameter 'password': must not contain NUL characters.", type: "invalid_request_error", code: "invalid_parameter" } });
    }
    const array = await call(server, "DELETE", "/api/auth/me", { cookie, raw: "[]" });
    expect(array.status).toBe(400);
    expect(array.body).toEqual({ error: { message: "Invalid parameter 'body': must be a JSON object.", type: "invalid_request_error", code: "invalid_parameter" } });
    const me = await call(server, "GET", "/api/auth/me", { cookie });
    expect(me.status).toBe(200);
    const charset = await call(server, "DELETE", "/api/auth/me", { cookie, raw: JSON.stringify({ password: PASSWORD }), headers: { "content-type": "application/json; charset=utf-8" } });
    expect(charset.status).toBe(200);
  });

  it("a key creation already past its session check when the account is deleted leaves no working key", async () => {
    const { cookie } = await verifiedUser(server);
    // hold the creation between its session check and its insert (the rate-limit step) until the deletion is done
    const hold = holdPoint();
    const limits = server.app.context.limits;
    const consume = limits.consume.bind(limits);
    limits.consume = async (name, key, points) => {
      if (name === "keysCreate") {
        await hold.pass();
      }
      return consume(name, key, points);
    };
    try {
      const creating = call(server, "POST", "/api/keys", { cookie, body: { name: "racing" } });
      await hold.reached;
      const deleted = await call(server, "DELETE", "/api/auth/me", { cookie, body: { password: PASSWORD } });
      expect(deleted.status).toBe(200);
      hold.release();
      const created = await creating;
      expect(created.status).toBe(401);
      expect(created.body.error).toEqual({ message: expect.any(String), type: "authentication_error", code: "unauthorized" });
      const active = await server.db.connection.collection("api_keys").countDocuments({ revokedAt: null, name: "racing" });
      expect(active).toBe(0);
    } finally {
      limits.consume = consume;
      hold.release();
    }
  });

  it("answers 401 unauthorized without a session", async () => {
    const res = await call(server, "DELETE", "/api/auth/me", { body: { password: PASSWORD } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
  });
});
