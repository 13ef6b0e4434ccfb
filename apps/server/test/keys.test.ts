import { readCookie, SESSION_COOKIE } from "@gw/auth";
import type { Principal } from "@gw/api";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestServer, type TestServer } from "./harness";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk arbitrary JSON
type JsonResponse = Omit<Response, "json"> & { json(): Promise<any> };
const http = (input: string, init?: RequestInit): Promise<JsonResponse> => fetch(input, init);

// Sessions are the accounts feature's; these tests pin a stand-in reader (cookie value `<userId>:<verified>`) so the
// key routes are exercised on their own over real HTTP and a real database.
function useStandInSessions(server: TestServer): void {
  server.app.context.sessions = {
    fromRequest: async (req): Promise<Principal | null> => {
      const value = readCookie(req.get("cookie"), SESSION_COOKIE);
      if (!value) return null;
      const [userId = "", verified] = value.split(":");
      return { userId, sessionId: `ses_${userId}`, emailVerified: verified === "1" };
    },
    isActive: async () => true,
  };
}

const sessionOf = (userId: string, verified = true) => ({ cookie: `${SESSION_COOKIE}=${userId}:${verified ? "1" : "0"}` });
const json = { "content-type": "application/json" };

describe("API keys (SPEC 2.4, 4.8, CONTRACT 3)", () => {
  let server: TestServer;
  const call = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
    http(`${server.url}${path}`, { method, headers: { ...headers, ...(body === undefined ? {} : json) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const createKey = async (userId: string, body: unknown = { name: "ci" }) => {
    const res = await call("POST", "/api/keys", sessionOf(userId), body);
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; key: string; prefix: string };
  };

  beforeAll(async () => {
    server = await startTestServer();
    useStandInSessions(server);
  });
  afterAll(async () => {
    await server.close();
  });

  describe("happy path", () => {
    it("creates a key: 201 with the full key once", async () => {
      const res = await call("POST", "/api/keys", sessionOf("usr_a"), { name: "Production", description: "backend jobs" });
      expect(res.status).toBe(201);
      const body = await res.json();
      // CONTRACT 10's controls and usage come with every key
      expect(Object.keys(body).sort()).toEqual([
        "allowed_ips", "allowed_models", "created_at", "description", "expires_at", "id", "key", "limit", "limit_remaining", "limit_reset",
        "name", "prefix", "rate_limit", "status", "usage",
      ]);
      expect(body).toMatchObject({ name: "Production", description: "backend jobs", status: "active" });
      expect(body.id).toMatch(/^key_[0-9A-Za-z]+$/);
      expect(body.key).toMatch(/^ak-live-[0-9A-Za-z]{32,}$/);
      expect(body.prefix).toBe(body.key.slice(0, 12));
      expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
      expect(res.headers.get("cache-control")).toBe("no-store");
    });

    it("returns an empty description when none is given and trims the name", async () => {
      const res = await call("POST", "/api/keys", sessionOf("usr_b"), { name: "  spaced  " });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ name: "spaced", description: "" });
    });

    it("lists active keys newest first without secrets", async () => {
      const first = await createKey("usr_list", { name: "first" });
      server.clock.advance(1000);
      const second = await createKey("usr_list", { name: "second" });
      const res = await call("GET", "/api/keys", sessionOf("usr_list"));
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.total).toBe(2);
      expect(body.keys.map((k: { id: string }) => k.id)).toEqual([second.id, first.id]);
      expect(body.keys[0]).toEqual({
        id: second.id, name: "second", description: "", prefix: second.prefix, created_at: expect.any(String),
        last_used: null, usage_count: 0, status: "active",
        limit: null, limit_reset: "never", allowed_models: null, rate_limit: null, expires_at: null, allowed_ips: null,
        usage: { spent_period: 0, spent_total: 0, requests_total: 0 }, limit_remaining: null,
      });
      expect(JSON.stringify(body)).not.toContain(second.key);
    });

    it("revokes a key: gone from the list, refused by the verifier, second revoke 404", async () => {
      const created = await createKey("usr_rev");
      expect(await server.app.context.apiKeys.verify(created.key)).toMatchObject({ userId: "usr_rev", keyId: created.id });
      const res = await call("DELETE", `/api/keys/${created.id}`, sessionOf("usr_rev"));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ success: true, message: expect.any(String), id: created.id });
      expect(await server.app.context.apiKeys.verify(created.key)).toBeNull();
      const list = await (await call("GET", "/api/keys", sessionOf("usr_rev"))).json();
      expect(list).toEqual({ keys: [], total: 0 });
      const again = await call("DELETE", `/api/keys/${created.id}`, sessionOf("usr_rev"));
      expect(again.status).toBe(404);
      expect(await again.json()).toEqual({ error: { message: expect.any(String), type: "not_found_error", code: "key_not_found" } });
    });

    it("concurrent revokes of one key: one 200, the others 404 key_not_found", async () => {
      // several rounds: on FerretDB a conditional findOneAndUpdate let two or three of twelve find the key active
      for (let round = 0; round < 3; round += 1) {
        const created = await createKey("usr_rev_race");
        const answers = await Promise.all(Array.from({ length: 12 }, () => call("DELETE", `/api/keys/${created.id}`, sessionOf("usr_rev_race"))));
        expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array.from({ length: 11 }, () => 404)]);
      }
    });

    it("revokes a key whose id is percent-encoded in the path (key%5F... is key_...); malformed encoding is 400", async () => {
      const created = await createKey("usr_pct");
      const res = await call("DELETE", `/api/keys/${created.id.replace("_", "%5F")}`, sessionOf("usr_pct"));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ success: true, message: expect.any(String), id: created.id });
      expect(await server.app.context.apiKeys.verify(created.key)).toBeNull();
      const malformed = await call("DELETE", "/api/keys/key%E0%A4%A", sessionOf("usr_pct"));
      expect(malformed.status).toBe(400);
      expect(await malformed.json()).toEqual({ error: { message: "Invalid parameter 'id': malformed percent-encoding.", type: "invalid_request_error", code: "invalid_parameter" } });
      // a NUL in the id is refused like one in any other field (CONTRACT 7b), not looked up and echoed in a 404
      const nul = await call("DELETE", "/api/keys/key%00abc", sessionOf("usr_pct"));
      expect(nul.status).toBe(400);
      expect(await nul.json()).toEqual({ error: { message: "Invalid parameter 'id': must not contain NUL characters.", type: "invalid_request_error", code: "invalid_parameter" } });
    });

    it("shows last_used and usage_count within 5 seconds of use", async () => {
      const created = await createKey("usr_use");
      const keys = server.app.context.apiKeys;
      for (let i = 0; i < 3; i += 1) {
        const principal = await keys.verify(created.key);
        if (principal?.keyId) keys.recordUse(principal.keyId);
      }
      const deadline = Date.now() + 5000;
      let listed: { last_used: string | null; usage_count: number } | undefined;
      while (Date.now() < deadline) {
        listed = (await (await call("GET", "/api/keys", sessionOf("usr_use"))).json()).keys[0];
        if (listed?.usage_count === 3) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(listed?.usage_count).toBe(3);
      expect(listed?.last_used).toBe(new Date(server.clock.now()).toISOString());
    });

    it("last_used never moves back when a batch with an older use is written after a newer one (two instances)", async () => {
      const created = await createKey("usr_use_order");
      const listed = async () => (await (await call("GET", "/api/keys", sessionOf("usr_use_order"))).json()).keys[0];
      // uses the key, then waits for its batch to be written
      const use = async (count: number) => {
        const res = await http(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${created.key}` } });
        expect(res.status).toBe(200);
        const deadline = Date.now() + 5000;
        while ((await listed()).usage_count !== count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      };
      const start = server.clock.now();
      server.clock.set(start + 60_000);
      await use(1);
      // another instance's batch, holding an earlier use, written afterwards
      server.clock.set(start);
      await use(2);
      expect(await listed()).toMatchObject({ usage_count: 2, last_used: new Date(start + 60_000).toISOString() });
    });

    it("a usage batch the database refuses is written on a later flush, not lost from usage_count", async () => {
      const created = await createKey("usr_use_retry");
      const listed = async () => (await (await call("GET", "/api/keys", sessionOf("usr_use_retry"))).json()).keys[0];
      const model = server.db.connection.model("ApiKeyUsage");
      const refused = vi.spyOn(model, "updateOne").mockImplementationOnce(() => { throw new Error("connection refused"); });
      try {
        for (let i = 0; i < 2; i += 1) {
          expect((await http(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${created.key}` } })).status).toBe(200);
        }
        const deadline = Date.now() + 5000;
        while (refused.mock.calls.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        expect(refused).toHaveBeenCalled();
      } finally {
        refused.mockRestore();
      }
      const deadline = Date.now() + 5000;
      while ((await listed()).usage_count !== 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await listed()).toMatchObject({ usage_count: 2, last_used: new Date(server.clock.now()).toISOString() });
    });

    it("revokeAllKeysForUser (account deletion) revokes every key of that user only", async () => {
      const a = await createKey("usr_del");
      const b = await createKey("usr_del");
      const other = await createKey("usr_keep");
      expect(await server.app.context.apiKeys.revokeAllKeysForUser("usr_del")).toBe(2);
      expect(await server.app.context.apiKeys.verify(a.key)).toBeNull();
      expect(await server.app.context.apiKeys.verify(b.key)).toBeNull();
      expect(await server.app.context.apiKeys.verify(other.key)).not.toBeNull();
    });
  });

  describe("errors", () => {
    it("401 unauthorized without a session, on every key route", async () => {
      for (const [method, path] of [["GET", "/api/keys"], ["POST", "/api/keys"], ["DELETE", "/api/keys/key_x"]] as const) {
        const res = await call(method, path, {}, method === "POST" ? { name: "x" } : undefined);
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({ error: { message: expect.any(String), type: "authentication_error", code: "unauthorized" } });
      }
    });

    it("401 unauthorized with an API key and no session", async () => {
      const created = await createKey("usr_keyonly");
      const auth = { authorization: `Bearer ${created.key}` };
      for (const [method, path] of [["GET", "/api/keys"], ["POST", "/api/keys"], ["DELETE", `/api/keys/${created.id}`]] as const) {
        const res = await call(method, path, auth, method === "POST" ? { name: "x" } : undefined);
        expect(res.status).toBe(401);
        expect((await res.json()).error.code).toBe("unauthorized");
      }
    });

    it("403 email_not_verified on create for an unverified account, which may still list", async () => {
      const res = await call("POST", "/api/keys", sessionOf("usr_unverified", false), { name: "x" });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: { message: expect.any(String), type: "permission_error", code: "email_not_verified" } });
      expect((await call("GET", "/api/keys", sessionOf("usr_unverified", false))).status).toBe(200);
    });

    it("404 key_not_found for unknown and foreign keys", async () => {
      const foreign = await createKey("usr_owner");
      for (const id of ["key_doesnotexist", foreign.id, "x".repeat(100)]) {
        const res = await call("DELETE", `/api/keys/${id}`, sessionOf("usr_intruder"));
        expect(res.status).toBe(404);
        expect((await res.json()).error.code).toBe("key_not_found");
      }
      expect(await server.app.context.apiKeys.verify(foreign.key)).not.toBeNull();
    });

    it("the session propagates its own errors (session_expired) unchanged", async () => {
      const original = server.app.context.sessions;
      const { AppError } = await import("@gw/shared");
      server.app.context.sessions = { ...original, fromRequest: async () => { throw new AppError("session_expired", "Your session has expired."); } };
      try {
        const res = await call("GET", "/api/keys", sessionOf("usr_a"));
        expect(res.status).toBe(401);
        expect((await res.json()).error.code).toBe("session_expired");
      } finally {
        server.app.context.sessions = original;
      }
    });
  });

  describe("bad input", () => {
    const post = (body: string | undefined, headers: Record<string, string> = json) =>
      http(`${server.url}/api/keys`, { method: "POST", headers: { ...sessionOf("usr_bad"), ...headers }, body });

    it.each([
      ["missing name", {}, "missing_required_parameter", "name"],
      ["empty name", { name: "" }, "invalid_parameter", "name"],
      ["blank name", { name: "   " }, "invalid_parameter", "name"],
      ["101-character name", { name: "n".repeat(101) }, "invalid_parameter", "name"],
      ["numeric name", { name: 42 }, "invalid_parameter", "name"],
      ["operator object as name", { name: { $gt: "" } }, "invalid_parameter", "name"],
      ["501-character description", { name: "ok", description: "d".repeat(501) }, "invalid_parameter", "description"],
      ["array body", [1, 2], "invalid_parameter", "body"],
    ])("%s → 400 %s naming %s", async (_label, body, code, param) => {
      const res = await post(JSON.stringify(body));
      expect(res.status).toBe(400);
      const answer = await res.json();
      expect(answer).toEqual({ error: { message: expect.stringContaining(`'${param}'`), type: "invalid_request_error", code } });
    });

    it.each([
      ["a line break", "prod\nkey"],
      ["a bell character", "prod\u0007"],
      ["an escape sequence", "\u001b[31mprod"],
      ["a Unicode line separator", "prod\u2028key"],
      ["a Unicode paragraph separator", "prod\u2029key"],
    ])("a name with %s → 400 invalid_parameter naming name, as for account names", async (label, name) => {
      const res = await http(`${server.url}/api/keys`, { method: "POST", headers: { ...sessionOf(`usr_ctl_${label.length}`), ...json }, body: JSON.stringify({ name }) });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { message: "Invalid parameter 'name': must not contain control characters.", type: "invalid_request_error", code: "invalid_parameter" } });
    });

    it.each([
      ["zero-width spaces", "\u200b\u200b"],
      ["a bidi mark and a no-break space", "\u200f\u00a0"],
      ["Braille blanks", "\u2800\u2800"],
      ["a combining grapheme joiner and variation selectors", "\u034f\ufe0f\u{e0100}"],
    ])("a name of only %s → 400 invalid_parameter 'must not be empty'", async (label, name) => {
      const res = await http(`${server.url}/api/keys`, { method: "POST", headers: { ...sessionOf(`usr_blank_${label.length}`), ...json }, body: JSON.stringify({ name }) });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { message: "Invalid parameter 'name': must not be empty.", type: "invalid_request_error", code: "invalid_parameter" } });
    });

    it("accepts a name in any script, with emoji", async () => {
      const res = await http(`${server.url}/api/keys`, { method: "POST", headers: { ...sessionOf("usr_unicode"), ...json }, body: JSON.stringify({ name: "Прод ключ 🔑 – 本番" }) });
      expect(res.status).toBe(201);
      expect((await res.json()).name).toBe("Прод ключ 🔑 – 本番");
    });

    it("accepts a 100-character name", async () => {
      expect((await post(JSON.stringify({ name: "n".repeat(100) }))).status).toBe(201);
    });

    it("malformed JSON → 400 invalid_json", async () => {
      const res = await post("{\"name\": ");
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe("invalid_json");
    });

    it("a non-JSON content type → 415 in the nested form", async () => {
      const res = await post("name=x", { "content-type": "text/plain" });
      expect(res.status).toBe(415);
      expect((await res.json()).error).toMatchObject({ type: "invalid_request_error", code: "unsupported_media_type" });
    });

    it("an empty POST body is a missing name", async () => {
      const res = await http(`${server.url}/api/keys`, { method: "POST", headers: sessionOf("usr_bad") });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe("missing_required_parameter");
    });

    it("a body over the JSON limit → 413 payload_too_large", async () => {
      const res = await post(JSON.stringify({ name: "x", description: "d".repeat(server.config.jsonBodyLimitBytes) }));
      expect(res.status).toBe(413);
      expect((await res.json()).error.code).toBe("payload_too_large");
    });
  });

  describe("security", () => {
    it("rejects a cookie-authenticated change from a foreign Origin (403 csrf_rejected)", async () => {
      const res = await call("POST", "/api/keys", { ...sessionOf("usr_csrf"), origin: "https://evil.example" }, { name: "x" });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: { message: expect.any(String), type: "permission_error", code: "csrf_rejected" } });
      const del = await call("DELETE", "/api/keys/key_x", { ...sessionOf("usr_csrf"), origin: "https://evil.example" });
      expect(del.status).toBe(403);
      const list = await (await call("GET", "/api/keys", sessionOf("usr_csrf"))).json();
      expect(list.total).toBe(0);
    });

    it("accepts the same change from PUBLIC_URL's origin or without an Origin", async () => {
      const origin = new URL(server.config.publicUrl).origin;
      expect((await call("POST", "/api/keys", { ...sessionOf("usr_csrf2"), origin }, { name: "x" })).status).toBe(201);
      expect((await call("POST", "/api/keys", sessionOf("usr_csrf2"), { name: "y" })).status).toBe(201);
    });

    it("reads from a foreign Origin are not blocked (GET is not state-changing)", async () => {
      expect((await call("GET", "/api/keys", { ...sessionOf("usr_csrf3"), origin: "https://evil.example" })).status).toBe(200);
    });

    it("stores only the hash and prefix, never the key", async () => {
      const created = await createKey("usr_store");
      const doc = await server.db.connection.collection("api_keys").findOne({ userId: "usr_store" });
      expect(doc).not.toBeNull();
      expect(JSON.stringify(doc)).not.toContain(created.key);
      expect(doc?.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(doc?.prefix).toBe(created.prefix);
    });

    it("refuses malformed, unknown and near-miss keys", async () => {
      const created = await createKey("usr_miss");
      const keys = server.app.context.apiKeys;
      const last = created.key.at(-1) === "a" ? "b" : "a";
      for (const candidate of ["", "ak-live-", "garbage", `${created.key.slice(0, -1)}${last}`, `${created.key}x`, created.key.toUpperCase()]) {
        expect(await keys.verify(candidate)).toBeNull();
      }
    });
  });

  describe("tRPC endpoint for the dashboard", () => {
    it("serves the same procedures at /api/trpc with spec error data", async () => {
      const ok = await http(`${server.url}/api/trpc/keys.list`, { headers: sessionOf("usr_trpc") });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ result: { data: { keys: [], total: 0 } } });
      const denied = await http(`${server.url}/api/trpc/keys.list`);
      expect(denied.status).toBe(401);
      const body = await denied.json();
      expect(body.error.data.error).toEqual({ message: expect.any(String), type: "authentication_error", code: "unauthorized" });
      // tRPC's own labels name the same status (a tRPC client reads them)
      expect(body.error).toMatchObject({ code: -32001, data: { code: "UNAUTHORIZED", httpStatus: 401 } });
      expect(JSON.stringify(body)).not.toContain("stack");
    });

    it("answers a failed creation with its error status, not the 201 of a successful one", async () => {
      const post = (path: string, headers: Record<string, string>, body: unknown) =>
        http(`${server.url}/api/trpc/${path}`, { method: "POST", headers: { ...headers, ...json }, body: JSON.stringify(body) });
      const unverified = await post("keys.create", sessionOf("usr_trpc_unverified", false), { name: "ci" });
      expect(unverified.status).toBe(403);
      expect((await unverified.json()).error.data.error.code).toBe("email_not_verified");
      const badName = await post("keys.create", sessionOf("usr_trpc_badname"), { name: "" });
      expect(badName.status).toBe(400);
      expect((await badName.json()).error.data.error.code).toBe("invalid_parameter");
      // the dashboard's httpBatchLink form
      const batched = await post("keys.create?batch=1", {}, { 0: { name: "ci" } });
      expect(batched.status).toBe(401);
      expect((await batched.json())[0].error.data.error.code).toBe("unauthorized");
      const email = `trpc-${Date.now()}@example.com`;
      const first = await post("auth.signup", {}, { email, password: "Quartz-Lamp-92", name: "T" });
      expect(first.status).toBe(201);
      const again = await post("auth.signup", {}, { email, password: "Quartz-Lamp-92", name: "T" });
      expect(again.status).toBe(409);
      const conflict = await again.json();
      expect(conflict.error.data.error.code).toBe("account_exists");
      expect(conflict.error).toMatchObject({ code: -32009, data: { code: "CONFLICT", httpStatus: 409 } });
      const created = await post("keys.create", sessionOf("usr_trpc_ok"), { name: "ci" });
      expect(created.status).toBe(201);
    });

    it("refuses a NUL character in any input field with 400 invalid_parameter naming it, as the REST routes do", async () => {
      const post = (path: string, body: unknown) =>
        http(`${server.url}/api/trpc/${path}`, { method: "POST", headers: { ...sessionOf("usr_trpc_nul"), ...json }, body: JSON.stringify(body) });
      const described = await post("keys.create", { name: "ci", description: "a\u0000b" });
      expect(described.status).toBe(400);
      expect((await described.json()).error.data.error).toEqual({ message: "Invalid parameter 'description': must not contain NUL characters.", type: "invalid_request_error", code: "invalid_parameter" });
      const batched = await post("keys.create?batch=1", { 0: { name: "ci", description: "\u0000" } });
      expect(batched.status).toBe(400);
      expect((await batched.json())[0].error.data.error.message).toBe("Invalid parameter 'description': must not contain NUL characters.");
      const signup = await post("auth.signup", { email: `nul-${Date.now()}@example.com`, password: "Quartz-Lamp-92\u0000", name: "N" });
      expect(signup.status).toBe(400);
      expect((await signup.json()).error.data.error.code).toBe("invalid_parameter");
      const listed = await http(`${server.url}/api/trpc/keys.list`, { headers: sessionOf("usr_trpc_nul") });
      expect((await listed.json()).result.data.total).toBe(0);
    });

    it("refuses a malformed body as the REST routes do: invalid_json (no parser text), bytes that are not UTF-8, other charsets", async () => {
      const post = (body: string | Uint8Array, contentType = "application/json") =>
        http(`${server.url}/api/trpc/keys.create`, { method: "POST", headers: { ...sessionOf("usr_trpc_body"), "content-type": contentType }, body });
      const malformed = await post("{x");
      expect(malformed.status).toBe(400);
      const body = await malformed.json();
      expect(body.error.data.error).toEqual({ message: "The request body is not valid JSON.", type: "invalid_request_error", code: "invalid_json" });
      expect(body.error).toMatchObject({ code: -32600, data: { code: "BAD_REQUEST", httpStatus: 400, path: "keys.create" } });
      const query = await http(`${server.url}/api/trpc/keys.list?input=%7Bx`, { headers: sessionOf("usr_trpc_body") });
      expect(query.status).toBe(400);
      expect((await query.json()).error.data.error.code).toBe("invalid_json");
      // {"name":"<0xff>"}: the adapter's own reader decoded it to U+FFFD and stored a key of that name
      const notUtf8 = await post(new Uint8Array([...Buffer.from('{"name":"'), 0xff, ...Buffer.from('"}')]));
      expect(notUtf8.status).toBe(400);
      expect((await notUtf8.json()).error.data.error.code).toBe("invalid_json");
      const utf16 = await post(JSON.stringify({ name: "ci" }), "application/json; charset=utf-16");
      expect(utf16.status).toBe(400);
      expect((await utf16.json()).error.data.error.code).toBe("invalid_parameter");
      const tooLarge = await post(JSON.stringify({ name: "x".repeat(2_000_000) }));
      expect(tooLarge.status).toBe(413);
      expect((await tooLarge.json()).error.data.error.code).toBe("payload_too_large");
      const listed = await http(`${server.url}/api/trpc/keys.list`, { headers: sessionOf("usr_trpc_body") });
      expect((await listed.json()).result.data.total).toBe(0);
      const fine = await post(JSON.stringify({ name: "ci" }));
      expect(fine.status).toBe(201);
    });
  });
});
