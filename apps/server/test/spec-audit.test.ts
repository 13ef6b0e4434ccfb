// Regressions found by the black-box SPEC/CONTRACT audit: each test is one deviation that was fixed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { call, RELAXED_LIMITS, uniqueEmail, PASSWORD, verifiedUser } from "./auth-helpers";
import { startTestServer, type TestServer } from "./harness";
import { fundedUser, postJson, readJson, type FundedUser } from "./support/gateway-fixtures";

const missing = (name: string) => ({
  error: { message: `Missing required parameter: '${name}'.`, type: "invalid_request_error", code: "missing_required_parameter" },
});

/** `{"model":"textA-4","messages":[{"role":"user","content":"a<FF FE>b"}]}`: bytes that are not UTF-8. */
const invalidUtf8Body = Buffer.concat([
  Buffer.from('{"model":"textA-4","messages":[{"role":"user","content":"a'),
  Buffer.from([0xff, 0xfe]),
  Buffer.from('b"}]}'),
]);

describe("SPEC/CONTRACT audit regressions", () => {
  let upstreams: FakeUpstreams;
  let server: TestServer;
  let user: FundedUser;

  beforeAll(async () => {
    upstreams = await startFakeUpstreams();
    server = await startTestServer({ env: { ...upstreams.env, ...RELAXED_LIMITS } });
    user = await fundedUser(server, 5);
  });
  afterAll(async () => {
    await server.close();
    await upstreams.close();
  });

  describe("absent enum and union fields are missing_required_parameter, not invalid_parameter (CONTRACT 1)", () => {
    it("a message without role or content on the task and chat endpoints", async () => {
      for (const path of ["/api/v1/task", "/v1/chat/completions"]) {
        const noRole = await postJson(server, path, user.key, { model: "textA-4", messages: [{ content: "hi" }] });
        expect(noRole.status).toBe(400);
        expect(await readJson(noRole)).toEqual(missing("messages[0].role"));
        const noContent = await postJson(server, path, user.key, { model: "textA-4", messages: [{ role: "user" }] });
        expect(noContent.status).toBe(400);
        expect(await readJson(noContent)).toEqual(missing("messages[0].content"));
      }
    });

    it("/v1/completions without prompt and /v1/embeddings without input", async () => {
      const completion = await postJson(server, "/v1/completions", user.key, { model: "text-davinci-003" });
      expect(completion.status).toBe(400);
      expect(await readJson(completion)).toEqual(missing("prompt"));
      const embedding = await postJson(server, "/v1/embeddings", user.key, { model: "text-embedding-ada-002" });
      expect(embedding.status).toBe(400);
      expect(await readJson(embedding)).toEqual(missing("input"));
    });

    it("validation messages read as English (an array, 1 item)", async () => {
      const notArray = await readJson(await postJson(server, "/api/v1/task", user.key, { model: "textA-4", messages: "hi" }));
      expect(notArray.error.message).toBe("Invalid parameter 'messages': must be an array.");
      const empty = await readJson(await postJson(server, "/api/v1/task", user.key, { model: "textA-4", messages: [] }));
      expect(empty.error.message).toBe("Invalid parameter 'messages': must have at least 1 item.");
    });

    it("validation messages state the rule broken: exclusive bounds, unions by their branches (CONTRACT 1)", async () => {
      const invalid = (message: string) => ({ error: { message, type: "invalid_request_error", code: "invalid_parameter" } });
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ["/v1/chat/completions", { model: "textA-4", messages: [{ role: "user", content: "x" }], max_tokens: 0 }, "Invalid parameter 'max_tokens': must be greater than 0."],
        ["/v1/chat/completions", { model: "textA-4", messages: [{ role: "user", content: { text: "x" } }] }, "Invalid parameter 'messages[0].content': must be a string or an array."],
        ["/v1/completions", { model: "text-davinci-003", prompt: ["a", "b"] }, "Invalid parameter 'prompt': must be a string or an array of exactly 1 item."],
        ["/v1/embeddings", { model: "text-embedding-ada-002", input: 42 }, "Invalid parameter 'input': must be a string or an array."],
      ];
      for (const [path, body, message] of cases) {
        const res = await postJson(server, path, user.key, body);
        expect({ path, status: res.status, body: await readJson(res) }).toEqual({ path, status: 400, body: invalid(message) });
      }
    });
  });

  describe("invalid UTF-8 is a 400, not silently replaced (CONTRACT 7b)", () => {
    it.each(["/api/v1/task", "/v1/chat/completions", "/api/auth/signup"])("%s", async (path) => {
      const res = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
        body: invalidUtf8Body,
      });
      expect(res.status).toBe(400);
      expect(res.headers.get("x-request-id")).toBeTruthy();
      expect(await res.json()).toEqual({
        error: { message: "The request body is not valid UTF-8 encoded JSON.", type: "invalid_request_error", code: "invalid_json" },
      });
    });
  });

  describe("NUL characters in REST bodies are a 400 naming the field, and nothing is written (CONTRACT 7b)", () => {
    it("signup with a NUL in the e-mail or the name", async () => {
      const email = uniqueEmail("nul");
      const [local, domain] = email.split("@");
      const inEmail = await call(server, "POST", "/api/auth/signup", { body: { email: `${local}\u0000@${domain}`, password: PASSWORD, name: "N" } });
      expect(inEmail.status).toBe(400);
      expect(inEmail.body).toEqual({
        error: { message: "Invalid parameter 'email': must not contain NUL characters.", type: "invalid_request_error", code: "invalid_parameter" },
      });
      const inName = await call(server, "POST", "/api/auth/signup", { body: { email, password: PASSWORD, name: "N\u0000" } });
      expect(inName.status).toBe(400);
      expect(inName.body.error.message).toBe("Invalid parameter 'name': must not contain NUL characters.");
      // neither attempt created the account
      const clean = await call(server, "POST", "/api/auth/signup", { body: { email, password: PASSWORD, name: "N" } });
      expect(clean.status).toBe(201);
    });

    it("half a surrogate pair (a lone \\ud800 escape) is 400 too: it is not text, and would be stored as U+FFFD", async () => {
      const { cookie } = await verifiedUser(server);
      const unpaired = (field: string) => ({ error: { message: `Invalid parameter '${field}': must not contain unpaired surrogates.`, type: "invalid_request_error", code: "invalid_parameter" } });
      const key = await call(server, "POST", "/api/keys", { cookie, raw: '{"name":"x\\ud800y"}' });
      expect(key.status).toBe(400);
      expect(key.body).toEqual(unpaired("name"));
      const email = uniqueEmail("surrogate");
      const signup = await call(server, "POST", "/api/auth/signup", { raw: `{"email":"${email}","password":"Quartz-Lamp-9\\udc00","name":"S"}` });
      expect(signup.status).toBe(400);
      expect(signup.body).toEqual(unpaired("password"));
      const trpc = await call(server, "POST", "/api/trpc/keys.create", { cookie, raw: '{"name":"k","description":"d\\udfff"}' });
      expect(trpc.status).toBe(400);
      expect(trpc.body.error.data.error).toEqual(unpaired("description").error);
      // a whole pair is an ordinary character
      const emoji = await call(server, "POST", "/api/keys", { cookie, raw: '{"name":"key \\ud83d\\udd11"}' });
      expect(emoji.status).toBe(201);
      expect(emoji.body.name).toBe("key 🔑");
      const listed = await call(server, "GET", "/api/keys", { cookie });
      expect(listed.body.keys.map((k: { name: string }) => k.name)).not.toContain("x\ufffdy");
    });
  });

  it("/api/trpc answers methods other than GET and POST with the app's JSON 404 (not tRPC's text/plain 415 or its 405)", async () => {
    for (const method of ["DELETE", "PUT", "PATCH", "OPTIONS"]) {
      const res = await call(server, method, "/api/trpc/auth.me");
      expect(res.status, method).toBe(404);
      expect(res.headers.get("content-type"), method).toMatch(/^application\/json/);
      expect(res.body, method).toEqual({ error: { message: `No route for ${method} /api/trpc/auth.me.`, type: "not_found_error", code: "not_found" } });
    }
    expect((await call(server, "GET", "/api/trpc/status.get")).status).toBe(200);
  });

  describe("absurdly nested JSON is a 400, never a stack overflow 500 (CONTRACT 7b)", () => {
    // raw text: the test's own JSON.stringify would overflow on such values
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const chatWith = (extra: string) => `{"model":"textA-4","messages":[{"role":"user","content":"hi"}],"extra":${extra}}`;
    const tooDeep = {
      error: { message: "Invalid parameter 'body': objects and arrays must not nest deeper than 100 levels.", type: "invalid_request_error", code: "invalid_parameter" },
    };

    it("in a REST body and in a field the chat endpoint would pass through upstream", async () => {
      const signup = await call(server, "POST", "/api/auth/signup", { raw: `{"email":"${uniqueEmail("deep")}","password":"${PASSWORD}","name":${nested(50_000)}}` });
      expect(signup.status).toBe(400);
      expect(signup.body).toEqual(tooDeep);
      const chat = await call(server, "POST", "/v1/chat/completions", { raw: chatWith(nested(50_000)), headers: { authorization: `Bearer ${user.key}` } });
      expect(chat.status).toBe(400);
      expect(chat.body).toEqual(tooDeep);
    });

    it("ordinary nesting still works", async () => {
      const chat = await call(server, "POST", "/v1/chat/completions", { raw: chatWith(nested(20)), headers: { authorization: `Bearer ${user.key}` } });
      expect(chat.status).toBe(200);
    });
  });

  it("HEAD on a REST GET route answers like GET, without a body", async () => {
    const res = await fetch(`${server.url}/api/status`, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(await res.text()).toBe("");
  });

  it("a corrupt gzip body is a 400, not a 500", async () => {
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json", "content-encoding": "gzip" },
      body: "this is not gzip",
    });
    expect(res.status).toBe(400);
    expect((await readJson(res)).error.code).toBe("invalid_parameter");
  });

  it("a model id that is not valid percent-encoding is a 400 after the key check, with the X-RateLimit-* headers (CONTRACT 7)", async () => {
    // its own key: the minute's budget of the suite's user is spent elsewhere
    const caller = await fundedUser(server, 0);
    for (const path of ["/v1/models/%E0%A4%A", "/API/V1/Models/text%A/"]) {
      const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${caller.key}` } });
      expect({ status: res.status, body: await readJson(res) }).toEqual({
        status: 400, body: { error: { message: "Invalid parameter 'path': malformed percent-encoding.", type: "invalid_request_error", code: "invalid_parameter" } },
      });
      expect(res.headers.get("x-ratelimit-limit")).toBe("20");
      expect(res.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
      const anonymous = await fetch(`${server.url}${path}`);
      expect({ status: anonymous.status, code: (await readJson(anonymous)).error.code }).toEqual({ status: 401, code: "invalid_api_key" });
    }
    // a well-formed encoded id is decoded; other spellings of the path reach the same entry
    for (const path of ["/v1/models/textA%2D4", "/Api/V1/models/textA-4/"]) {
      const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${caller.key}` } });
      expect({ path, status: res.status, id: (await readJson(res)).id }).toEqual({ path, status: 200, id: "textA-4" });
    }
  });

  describe("the debug object of authentication errors (SPEC 7.1, CONTRACT 1)", () => {
    it("is absent outside NODE_ENV=development", async () => {
      const res = await fetch(`${server.url}/v1/models`, { headers: { authorization: "Bearer ak-live-unknown" } });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        error: { message: expect.any(String) as string, type: "authentication_error", code: "invalid_api_key" },
      });
    });

    it("appears with NODE_ENV=development, on gateway and REST routes alike", async () => {
      const dev = await startTestServer({ env: { ...upstreams.env, NODE_ENV: "development" } });
      try {
        for (const [path, code] of [["/v1/models", "invalid_api_key"], ["/api/keys", "unauthorized"]] as const) {
          const res = await fetch(`${dev.url}${path}`, { headers: path === "/v1/models" ? { authorization: "Bearer ak-live-unknown", "user-agent": "audit" } : { "user-agent": "audit" } });
          expect(res.status).toBe(401);
          const body = await readJson(res);
          expect(body.error.code).toBe(code);
          expect(body.debug).toEqual({ timestamp: expect.any(String) as string, ip: expect.any(String) as string, user_agent: "audit" });
        }
      } finally {
        await dev.close();
      }
    });
  });
});
