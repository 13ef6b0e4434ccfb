import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { verifiedUser } from "./auth-helpers";
import { fundedUser } from "./support/gateway-fixtures";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk arbitrary JSON
type JsonResponse = Omit<Response, "json"> & { json(): Promise<any> };
const http = (input: string, init?: RequestInit): Promise<JsonResponse> => fetch(input, init);

describe("OpenAPI document and reference page", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { PUBLIC_URL: "https://gateway.example" } });
  });
  afterAll(async () => {
    await server.close();
  });

  it("GET /api/openapi.json is generated from the routers", async () => {
    const res = await http(`${server.url}/api/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const doc = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: "https://gateway.example/api" }]);
    expect(Object.keys(doc.paths["/keys"]).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/keys/{id}"]).sort()).toEqual(["delete", "get", "patch"]);
    expect(Object.keys(doc.paths["/keys/{id}/rotate"])).toEqual(["post"]);
    expect(Object.keys(doc.paths["/v1/key"])).toEqual(["get"]);
    for (const path of ["/status", "/status/external"]) expect(doc.paths[path].get).toBeDefined();
    expect(Object.keys(doc.paths["/example"]).sort()).toEqual(["get", "post"]);
  });

  it("lists the REST routes Express serves too: credits (flat errors), webhook, DELETE /auth/me, OAuth", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const credits = doc.paths["/billing/credits"].get;
    expect(credits.security).toEqual([{ session: [] }, { apiKey: [] }]);
    expect(credits.responses["200"].content["application/json"].schema.required).toEqual(["balance", "currency"]);
    expect(credits.responses["401"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/FlatError" });
    const unauthorized = await http(`${server.url}/api/billing/credits`);
    expect(unauthorized.status).toBe(401);
    expect(doc.components.schemas.FlatError.properties.error.enum).toContain((await unauthorized.json()).error);
    expect(Object.keys(doc.paths["/billing/webhook"].post.responses)).toEqual(expect.arrayContaining(["200", "400", "503"]));
    expect(Object.keys(doc.paths["/auth/me"]).sort()).toEqual(["delete", "get", "patch"]);
    expect(doc.paths["/auth/me"].delete.responses["401"].description).toContain("invalid_credentials");
    expect(doc.paths["/auth/callback"].get.parameters.map((p: { name: string }) => p.name)).toEqual(["code", "state"]);
    expect(doc.paths["/auth/oauth/{provider}"].get.responses["302"]).toBeDefined();
  });

  it("documents the real statuses and the spec's error shapes", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const create = doc.paths["/keys"].post;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "403", "429"]));
    expect(create.responses["200"]).toBeUndefined();
    expect(create.requestBody.content["application/json"].schema.required).toEqual(["name"]);
    expect(create.responses["403"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/NestedError" });
    expect(doc.paths["/keys/{id}"].delete.responses["404"].description).toContain("key_not_found");
    expect(doc.paths["/status"].get.responses["503"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/StatusError" });
    expect(doc.paths["/status"].get.security).toBeUndefined();
    expect(doc.components.schemas.NestedError.properties.error.required).toEqual(["message", "type", "code"]);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("documents every status a route really answers, with its code", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const json = { "content-type": "application/json" };
    const signup = { email: `dup-${Date.now()}@example.com`, password: "Zx9!qwerty-Lamp", name: "Dup" };
    await http(`${server.url}/api/auth/signup`, { method: "POST", headers: json, body: JSON.stringify(signup) });
    // a subscriber: a subscription checkout beside the active subscription is 409 conflict
    const subscriber = { ...json, cookie: (await verifiedUser(server)).cookie };
    const subscribed = await http(`${server.url}/api/billing/create-subscription`, { method: "POST", headers: subscriber, body: JSON.stringify({ plan_id: "pro", payment_method_id: "pm_card_visa" }) });
    expect(subscribed.status).toBe(200);
    const secondPlan = { type: "subscription", plan_id: "team", success_url: "https://example.com/ok", cancel_url: "https://example.com/no" };
    const cases: Array<[string, string, RequestInit]> = [
      ["/auth/signup", "post", { method: "POST", headers: json, body: JSON.stringify(signup) }],
      ["/auth/signup", "post", { method: "POST", headers: json, body: JSON.stringify({ ...signup, email: "weak@example.com", password: "short" }) }],
      ["/auth/login", "post", { method: "POST", headers: json, body: JSON.stringify({ email: signup.email, password: "Wrong-pass-1!" }) }],
      ["/auth/login", "post", { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" }],
      ["/auth/verify-email", "post", { method: "POST", headers: json, body: JSON.stringify({ token: "nope" }) }],
      ["/billing/create-payment-intent", "post", { method: "POST", headers: { ...json, authorization: "Bearer ak-live-nope" }, body: JSON.stringify({ amount: 10 }) }],
      ["/example", "post", { method: "POST", headers: json, body: JSON.stringify({ pad: "x".repeat(2_000_000) }) }],
      ["/billing/create-checkout-session", "post", { method: "POST", headers: subscriber, body: JSON.stringify(secondPlan) }],
    ];
    const wrong: string[] = [];
    for (const [path, method, init] of cases) {
      const res = await http(`${server.url}/api${path}`, init);
      const code: string = (await res.json()).error.code;
      const documented = doc.paths[path][method].responses[String(res.status)];
      if (!documented?.description.split(", ").includes(code)) wrong.push(`${method} ${path}: ${res.status} ${code}`);
    }
    expect(wrong).toEqual([]);
    expect(doc.paths["/auth/signup"].post.responses["409"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/NestedError" });
  });

  it("declares per route the credentials it really accepts", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const { key } = await fundedUser(server, 0);
    const json = { "content-type": "application/json" };
    // public: answered without any credentials
    const reset = await http(`${server.url}/api/auth/password-reset`, { method: "POST", headers: json, body: JSON.stringify({ email: "nobody@example.com" }) });
    expect(reset.status).toBe(200);
    for (const path of ["/auth/signup", "/auth/login", "/auth/verify-email", "/auth/password-reset", "/auth/password-reset/confirm"]) {
      expect(doc.paths[path].post.security, path).toBeUndefined();
      expect(doc.paths[path].post.responses["401"]?.description ?? "", path).not.toContain("unauthorized");
    }
    // session only: an API key alone is refused
    const keys = await http(`${server.url}/api/keys`, { headers: { authorization: `Bearer ${key}` } });
    expect(keys.status).toBe(401);
    expect((await keys.json()).error.code).toBe("unauthorized");
    const sessionOnly: Array<[string, string]> = [["/keys", "get"], ["/keys", "post"], ["/keys/{id}", "delete"], ["/auth/me", "get"], ["/auth/logout", "post"]];
    for (const [path, method] of sessionOnly) {
      expect(doc.paths[path][method].security, `${method} ${path}`).toEqual([{ session: [] }]);
    }
    // session or API key
    const config = await http(`${server.url}/api/billing/config`, { headers: { authorization: `Bearer ${key}` } });
    expect(config.status).toBe(200);
    expect(doc.paths["/billing/config"].get.security).toEqual([{ session: [] }, { apiKey: [] }]);
    expect(doc.paths["/billing/config"].get.responses["401"].description).toContain("invalid_api_key");
    // no e-mail verification needed; only a key of a suspended account is refused (CONTRACT 12)
    expect(doc.paths["/billing/config"].get.responses["403"].description).toBe("account_suspended");
  });

  it("lists GET /api/usage, the REST route the gateway serves, with its real answer and errors", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const { key } = await fundedUser(server, 0);
    const usage = doc.paths["/usage"].get;
    expect(usage.security).toEqual([{ session: [] }, { apiKey: [] }]);
    expect(usage.parameters.map((p: { name: string }) => p.name)).toEqual(["page", "per_page", "from", "to", "model", "key_id", "endpoint", "status", "format"]);
    expect(usage.parameters[1].schema).toMatchObject({ minimum: 1, maximum: 100, default: 50 });
    const res = await http(`${server.url}/api/usage`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const body = await res.json();
    const schema = usage.responses["200"].content["application/json"].schema;
    expect(Object.keys(body).sort()).toEqual([...schema.required].sort());
    expect(Object.keys(body.totals).sort()).toEqual([...schema.properties.totals.required].sort());
    expect(body.pagination.per_page).toBe(50);
    const bad = await http(`${server.url}/api/usage?per_page=0`, { headers: { authorization: `Bearer ${key}` } });
    expect(bad.status).toBe(400);
    expect(usage.responses["400"].description).toContain((await bad.json()).error.code);
    const noKey = await http(`${server.url}/api/usage`);
    expect(noKey.status).toBe(401);
    expect(usage.responses["401"].description).toContain((await noKey.json()).error.code);
    // a gateway route: the database outage is answered in the nested form, not the status form
    expect(usage.responses["503"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/NestedError" });
  });

  it("request schemas state the rules the routes enforce", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const { key } = await fundedUser(server, 0);
    const post = (path: string, body: unknown) => http(`${server.url}/api${path}`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body),
    });
    const checkout = doc.paths["/billing/create-checkout-session"].post.requestBody.content["application/json"].schema.properties;
    expect(checkout.type.enum).toEqual(["credits", "subscription"]);
    const urls = { success_url: "https://example.com/ok", cancel_url: "https://example.com/no" };
    const other = await post("/billing/create-checkout-session", { type: "gift", amount: 10, ...urls });
    expect(other.status).toBe(400);
    expect((await other.json()).error.message).toContain("'type'");
    const intent = doc.paths["/billing/create-payment-intent"].post.requestBody.content["application/json"].schema.properties;
    for (const amount of [checkout.amount, intent.amount]) expect(amount).toMatchObject({ type: "number", minimum: 1, maximum: 10_000, multipleOf: 0.01 });
    for (const amount of [0.99, 10_000.01, 10.001]) {
      const res = await post("/billing/create-payment-intent", { amount });
      expect(res.status, String(amount)).toBe(400);
      expect((await res.json()).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'amount'") });
    }
    const login = doc.paths["/auth/login"].post.requestBody.content["application/json"].schema.properties;
    // the looser rule a look-up applies (accounts made before the stricter one stay reachable), not `format: email`
    expect(new RegExp(login.email.pattern).test("not-an-address")).toBe(false);
    const notEmail = await http(`${server.url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "not-an-address", password: "x" }) });
    expect(notEmail.status).toBe(400);
    expect((await notEmail.json()).error.code).toBe("invalid_parameter");
  });

  it("describes exactly what the server accepts: the cases a schema-driven fuzzer found (issue 38)", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const user = await verifiedUser(server);
    const { key } = await fundedUser(server, 0);
    const get = (path: string, headers: Record<string, string> = { cookie: user.cookie }) => http(`${server.url}/api${path}`, { headers });
    const body = (path: string, method: string) => doc.paths[path][method].requestBody.content["application/json"].schema;

    // currency: only usd, in any case, and the document says so
    const currency = new RegExp(body("/billing/create-payment-intent", "post").properties.currency.pattern);
    expect(["usd", "USD", "Usd"].every((c) => currency.test(c))).toBe(true);
    expect(currency.test("eur")).toBe(false);
    const intent = (c: string) => http(`${server.url}/api/billing/create-payment-intent`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ amount: 10, currency: c }),
    });
    expect((await intent("eur")).status).toBe(400);

    // history's query: text as the document's patterns say; `before` of 2^53 and above reads from the newest entry
    const params = Object.fromEntries(doc.paths["/billing/history"].get.parameters.map((p: { name: string; schema: unknown }) => [p.name, p.schema]));
    expect(params.limit).toMatchObject({ type: "string" });
    expect(params.limit.anyOf).toBeUndefined();
    for (const before of ["9007199254740992", "9999999999999999"]) {
      expect(new RegExp(params.before.pattern).test(before)).toBe(true);
      expect((await get(`/billing/history?before=${before}`)).status).toBe(200);
    }
    expect(new RegExp(params.limit.pattern).test("007")).toBe(true);
    expect((await get("/billing/history?limit=007")).status).toBe(200);
    for (const limit of ["", "0", "101", "1.5", "00000000000000001"]) {
      expect(new RegExp(params.limit.pattern).test(limit), limit).toBe(false);
      const res = await get(`/billing/history?limit=${limit}`);
      expect(res.status, `limit=${limit}`).toBe(400);
      expect((await res.json()).error.message).toContain("'limit'");
    }
    expect((await get("/billing/history?limit=100")).status).toBe(200);

    // a key id over 100 characters is refused, as the document's maxLength says
    expect(doc.paths["/keys/{id}"].delete.parameters[0].schema.maxLength).toBe(100);
    const longId = await http(`${server.url}/api/keys/${"k".repeat(101)}`, { method: "DELETE", headers: { cookie: user.cookie } });
    expect(longId.status).toBe(400);
    // … counted once decoded, as the document counts them: 100 percent-encoded 'é' (600 characters in the URL) are a
    // valid id, looked up (404), on every route of the path; 101 are not
    for (const method of ["GET", "PATCH", "DELETE"]) {
      const init = { method, headers: { cookie: user.cookie, "content-type": "application/json" }, ...(method === "PATCH" ? { body: "{}" } : {}) };
      const id = (n: number) => `${server.url}/api/keys/${encodeURIComponent("é".repeat(n))}`;
      expect((await http(id(100), init)).status, method).toBe(404);
      expect((await http(id(101), init)).status, method).toBe(400);
    }

    // NUL anywhere in a body (an unknown key included) is refused, and the document says so for keys and strings
    const keysBody = body("/keys", "post");
    expect(keysBody.propertyNames).toEqual({ pattern: "^[^\\u0000]*$" });
    expect(keysBody.additionalProperties).toEqual({ $ref: "#/components/schemas/TextJson" });
    const nulKey = await http(`${server.url}/api/keys`, { method: "POST", headers: { cookie: user.cookie, "content-type": "application/json" }, body: JSON.stringify({ name: "k", "a\u0000b": 1 }) });
    expect(nulKey.status).toBe(400);

    // the webhook's signature header is declared, and an empty one refused
    expect(doc.paths["/billing/webhook"].post.parameters).toEqual([expect.objectContaining({ name: "Stripe-Signature", in: "header", required: true, schema: { type: "string", minLength: 1 } })]);

    // a declared path asked with an undeclared method: 405 with Allow, in the nested error form
    for (const [method, path, allow] of [["PUT", "/keys", "GET, POST, HEAD"], ["PATCH", "/status", "GET, HEAD"], ["PUT", "/keys/key_x", "GET, DELETE, PATCH, HEAD"], ["DELETE", "/billing/webhook", "POST"]] as const) {
      const res = await http(`${server.url}/api${path}`, { method, headers: { cookie: user.cookie } });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
      expect((await res.json()).error).toMatchObject({ code: "method_not_allowed", type: "invalid_request_error" });
    }
    expect((await http(`${server.url}/api/nowhere`, { method: "PUT" })).status).toBe(404);

    // no pattern needs more than what Python's re and ECMAScript share (no \p{...} escapes)
    expect(JSON.stringify(doc)).not.toMatch(/\\\\p\{/);
  });

  it("validates as an OpenAPI 3.1 document, every $ref resolving", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) expect(doc.components.schemas[JSON.parse(ref).split("/").at(-1)], ref).toBeDefined();
  });

  it("covers every gateway route at its full path on the public origin, each with its security", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const routes: Array<[string, string]> = [
      ["/api/v1/task", "post"], ["/api/v1/imageA/generate", "post"], ["/api/v1/imageB.1", "post"], ["/v1/chat/completions", "post"],
      ["/v1/completions", "post"], ["/v1/embeddings", "post"], ["/v1/models", "get"], ["/api/v1/models", "get"], ["/v1/models/{id}", "get"],
      ["/api/v1/models/{id}", "get"], ["/v1/images/generations", "post"], ["/v1/audio/speech", "post"], ["/v1/audio/transcriptions", "post"],
      ["/v1/moderations", "post"], ["/v1/responses", "post"], ["/v1/responses/{id}", "get"], ["/v1/responses/{id}", "delete"],
      ["/v1/messages", "post"], ["/v1/messages/count_tokens", "post"],
    ];
    for (const [path, method] of routes) {
      const item = doc.paths[path];
      expect(item?.servers, path).toEqual([{ url: "https://gateway.example" }]);
      const security = path.startsWith("/v1/messages") ? [{ apiKey: [] }, { anthropicApiKey: [] }] : [{ apiKey: [] }];
      expect(item[method]?.security, `${method} ${path}`).toEqual(security);
      expect(item[method].responses["200"], `${method} ${path}`).toBeDefined();
    }
    expect(doc.components.securitySchemes.anthropicApiKey).toEqual(expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }));
    // every operation of the document declares its security, but the public ones (status, auth, webhook, OAuth)
    const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item as Record<string, { security?: unknown }>)
      .filter(([method]) => method !== "servers").map(([method, op]) => ({ path, method, secured: op.security !== undefined })));
    const open = operations.filter((o) => !o.secured).map((o) => o.path);
    for (const path of open) expect(path, path).toMatch(/^\/(status|example|auth\/(signup|login|verify-email|password-reset|oauth|callback)|billing\/webhook)/);
    const html = await (await http(`${server.url}/api/docs`)).text();
    expect(html).toContain("<code>/v1/chat/completions</code>");
    expect(html).toContain("<code>/api/v1/task</code>");
  });

  it("gateway request schemas are the routes' own rules", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const body = (path: string, type = "application/json") => doc.paths[path].post.requestBody.content[type].schema;
    expect(body("/v1/chat/completions").properties.n.anyOf[0]).toMatchObject({ type: "integer", minimum: 1, maximum: 128 });
    expect(body("/v1/chat/completions").required).toEqual(["model", "messages"]);
    expect(body("/v1/audio/speech").properties.response_format.anyOf[0].enum).toEqual(["mp3", "opus", "aac", "flac", "wav", "pcm"]);
    const form = body("/v1/audio/transcriptions", "multipart/form-data");
    expect(form.required).toEqual(["model", "file"]);
    expect(form.properties.file).toEqual({ type: "string", format: "binary" });
    expect(form.properties.response_format.anyOf[0].enum).toEqual(["json", "text", "srt", "verbose_json", "vtt"]);
    expect(body("/v1/images/generations").properties.n.anyOf[0]).toMatchObject({ minimum: 1, maximum: 10 });
    expect(body("/v1/images/generations").properties.prompt).toMatchObject({ type: "string", minLength: 1, maxLength: 4000 });
    expect(body("/v1/audio/speech").properties.input).toMatchObject({ type: "string", minLength: 1, maxLength: 4096 });
    const speech = doc.paths["/v1/audio/speech"].post.responses;
    expect(Object.keys(speech["200"].content)).toEqual(["audio/mpeg", "audio/opus", "audio/wav", "audio/pcm"]);
    expect(speech["402"].description).toContain("insufficient_credits");
    expect(doc.paths["/v1/messages"].post.responses["401"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/AnthropicError" });
  });

  it("every gateway operation's answers, refusals included, are among its documented statuses", async () => {
    const doc = await (await http(`${server.url}/api/openapi.json`)).json();
    const { key } = await fundedUser(server, 0);
    const undocumented: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: { content: Record<string, unknown> } }>>)) {
      if (!("servers" in item)) continue;
      const url = `${server.url}${path.replace("{id}", "textA-4")}`;
      for (const [method, operation] of Object.entries(item)) {
        if (method === "servers") continue;
        const form = operation.requestBody?.content["multipart/form-data"] !== undefined && operation.requestBody.content["application/json"] === undefined;
        const attempts: RequestInit[] = [
          { method: method.toUpperCase() },
          { method: method.toUpperCase(), headers: { authorization: `Bearer ${key}` } },
          ...(method === "post" ? [
            form
              ? { method: "POST", headers: { authorization: `Bearer ${key}` }, body: new FormData() }
              : { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: "{}" },
            { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: "{\"model\": 5" },
          ] : []),
        ];
        for (const init of attempts) {
          const res = await http(url, init);
          await res.text();
          if (!(String(res.status) in operation.responses)) undocumented.push(`${method} ${path}: ${res.status}`);
        }
      }
    }
    expect(undocumented).toEqual([]);
  });

  it("GET /api/docs renders a readable reference without scripts", async () => {
    const res = await http(`${server.url}/api/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain("<code>/api/keys/{id}</code>");
    expect(html).toContain("/api/openapi.json");
    expect(html).toContain("/api/status/external");
    expect(html).not.toContain("<script");
  });
});
