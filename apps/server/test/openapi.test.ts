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
    expect(doc.paths["/billing/config"].get.responses["403"]).toBeUndefined();
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
    expect(login.email.format).toBe("email");
    const notEmail = await http(`${server.url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "not-an-address", password: "x" }) });
    expect(notEmail.status).toBe(400);
    expect((await notEmail.json()).error.code).toBe("invalid_parameter");
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
