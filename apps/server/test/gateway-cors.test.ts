import { DEFAULT_PLANS } from "@gw/config";
import { dollarsToMicros } from "@gw/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { authHeaders, balanceMicros, fundedUser, readJson, type FundedUser } from "./support/gateway-fixtures";

// CORS on the API-key routes (/v1/*, /api/v1/*), as OpenAI's API answers browsers: preflights without a key,
// Allow-Origin and Expose-Headers on every answer to a request carrying Origin, never credentials.

const APP = "https://app.example.com";
const EXPOSED = "X-Request-Id, X-Request-Cost, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Idempotent-Replayed, Deprecation, X-Should-Retry, X-Gateway-Model";
/** what the OpenAI SDKs ask for in a browser */
const SDK_HEADERS = "authorization, content-type, idempotency-key, openai-organization, x-stainless-lang, x-stainless-retry-count";
const RPM = 3;
const chat = JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "hello" }], max_tokens: 5 });

const preflight = (server: TestServer, path: string, origin = APP, method = "POST") =>
  fetch(`${server.url}${path}`, { method: "OPTIONS", headers: { origin, "access-control-request-method": method, "access-control-request-headers": SDK_HEADERS } });

const CORS_HEADERS = ["access-control-allow-origin", "access-control-allow-methods", "access-control-allow-headers", "access-control-expose-headers", "access-control-max-age", "access-control-allow-credentials"];
const corsHeadersOf = (res: Response): Record<string, string> =>
  Object.fromEntries(CORS_HEADERS.flatMap((name) => {
    const value = res.headers.get(name);
    return value === null ? [] : [[name, value]];
  }));

describe("CORS on the API-key routes (API_CORS_ORIGINS default *)", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  let user: FundedUser;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    server = await startTestServer({ env: fakes.env, config: { plans: DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: RPM })) } });
    user = await fundedUser(server, 5);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  it("answers a preflight with 204, the route's methods and the requested headers: no key, nothing counted", async () => {
    const counted = await fundedUser(server, 0);
    for (const [path, methods] of [["/v1/chat/completions", "POST"], ["/api/v1/task", "POST"], ["/V1/Chat/Completions/", "POST"], ["/v1/models", "GET, HEAD"], ["/api/v1/models/textA-4", "GET, HEAD"]] as const) {
      // the key is there only to show it is not counted: browsers send none in a preflight
      const res = await fetch(`${server.url}${path}`, {
        method: "OPTIONS",
        headers: { origin: APP, "access-control-request-method": methods.split(",")[0] ?? "", "access-control-request-headers": SDK_HEADERS, authorization: `Bearer ${counted.key}` },
      });
      expect(res.status, path).toBe(204);
      expect(corsHeadersOf(res), path).toEqual({
        "access-control-allow-origin": "*",
        "access-control-allow-methods": methods,
        "access-control-allow-headers": SDK_HEADERS,
        "access-control-max-age": "7200",
      });
      expect(res.headers.get("x-request-id")).toMatch(/^req/);
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(RPM));
      expect(await res.text()).toBe("");
    }
    const after = await fetch(`${server.url}/v1/models`, { headers: authHeaders(counted.key, false) });
    expect(after.status).toBe(200);
    expect(after.headers.get("x-ratelimit-remaining")).toBe(String(RPM - 1));
  });

  it("an OPTIONS that is no preflight (no Origin) is answered as before: the key is asked for", async () => {
    const res = await fetch(`${server.url}/v1/chat/completions`, { method: "OPTIONS", headers: { "access-control-request-method": "POST" } });
    expect(res.status).toBe(401);
    expect(corsHeadersOf(res)).toEqual({});
  });

  it("a request with Origin gets Allow-Origin and Expose-Headers on success, on the direct route and the router's spelling", async () => {
    const before = await balanceMicros(server, user.userId);
    let charged = 0;
    for (const path of ["/v1/chat/completions", "/V1/chat/completions/"]) {
      const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { ...authHeaders(user.key), origin: APP }, body: chat });
      expect(res.status, path).toBe(200);
      expect(corsHeadersOf(res), path).toEqual({ "access-control-allow-origin": "*", "access-control-expose-headers": EXPOSED });
      expect(res.headers.get("vary")).toBeNull();
      charged += dollarsToMicros(Number(res.headers.get("x-request-cost")));
      expect((await readJson(res)).object).toBe("chat.completion");
    }
    // each charged once, what its X-Request-Cost says
    expect(charged).toBeGreaterThan(0);
    expect(await balanceMicros(server, user.userId)).toBe(before - charged);
  });

  it("and on refusals: 401 without a key, 402 without credits, 429 over the plan's limit", async () => {
    const noKey = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { "content-type": "application/json", origin: APP }, body: chat });
    expect(noKey.status).toBe(401);
    expect((await readJson(noKey)).error.code).toBe("invalid_api_key");
    expect(corsHeadersOf(noKey)).toEqual({ "access-control-allow-origin": "*", "access-control-expose-headers": EXPOSED });

    const broke = await fundedUser(server, 0);
    const poor = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: { ...authHeaders(broke.key), origin: APP }, body: chat });
    expect(poor.status).toBe(402);
    expect((await readJson(poor)).error.code).toBe("insufficient_credits");
    expect(corsHeadersOf(poor)).toEqual({ "access-control-allow-origin": "*", "access-control-expose-headers": EXPOSED });
    expect(await balanceMicros(server, broke.userId)).toBe(0);

    const busy = await fundedUser(server, 0);
    for (let i = 0; i < RPM; i += 1) expect((await fetch(`${server.url}/v1/models`, { headers: authHeaders(busy.key, false) })).status).toBe(200);
    const limited = await fetch(`${server.url}/v1/models`, { headers: { ...authHeaders(busy.key, false), origin: APP } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(corsHeadersOf(limited)).toEqual({ "access-control-allow-origin": "*", "access-control-expose-headers": EXPOSED });
  });

  it("a request without Origin gets no CORS headers, answered or refused", async () => {
    const ok = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: authHeaders(user.key), body: chat });
    expect(ok.status).toBe(200);
    const refused = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { "content-type": "application/json" }, body: chat });
    expect(refused.status).toBe(401);
    for (const res of [ok, refused]) {
      expect(corsHeadersOf(res)).toEqual({});
      expect(res.headers.get("vary")).toBeNull();
    }
  });

  it("the session routes stay without CORS (their CSRF check stands)", async () => {
    const list = await fetch(`${server.url}/api/keys`, { headers: { origin: APP } });
    expect(list.status).toBe(401);
    expect(corsHeadersOf(list)).toEqual({});
    const pre = await preflight(server, "/api/keys");
    expect(pre.status).not.toBe(204);
    expect(corsHeadersOf(pre)).toEqual({});
  });

  it("an OPTIONS of the usage API or another route Express serves itself is answered as any other undeclared method (405), never Express's 200 text/plain", async () => {
    const usage = await preflight(server, "/api/usage", APP, "GET");
    expect(usage.status).toBe(401);
    expect(usage.headers.get("cache-control")).toBe("no-store");
    expect(corsHeadersOf(usage)).toEqual({});
    expect((await readJson(usage)).error.code).toBe("unauthorized");
    // a path the OpenAPI document declares, asked with a method it does not: 405 with the declared methods in Allow
    const keyed = await fetch(`${server.url}/api/usage`, { method: "OPTIONS", headers: authHeaders(user.key, false) });
    expect(keyed.status).toBe(405);
    expect(keyed.headers.get("allow")).toBe("GET, HEAD");
    expect((await readJson(keyed)).error.code).toBe("method_not_allowed");
    // /api/auth/me also serves GET and PATCH: Express's own answer said only "DELETE"
    for (const [path, allow] of [["/api/auth/me", "GET, DELETE, PATCH, HEAD"], ["/api/auth/oauth/google", "GET, HEAD"], ["/api/auth/callback", "GET, HEAD"]]) {
      const res = await fetch(`${server.url}${path}`, { method: "OPTIONS" });
      expect(res.status, path).toBe(405);
      expect(res.headers.get("allow"), path).toBe(allow);
      expect(res.headers.get("cache-control"), path).toBe("no-store");
      expect((await readJson(res)).error, path).toMatchObject({ code: "method_not_allowed", type: "invalid_request_error" });
    }
  });
});

describe("API_CORS_ORIGINS as a list, and empty", () => {
  let listed: TestServer;
  let off: TestServer;
  let user: FundedUser;
  const LOCAL = "http://localhost:5173";

  beforeAll(async () => {
    listed = await startTestServer({ env: { API_CORS_ORIGINS: `${APP}, ${LOCAL}` } });
    off = await startTestServer({ env: { API_CORS_ORIGINS: "" } });
    user = await fundedUser(listed, 0);
  });
  afterAll(async () => {
    await listed.close();
    await off.close();
  });

  it("answers a listed origin with itself and Vary: Origin", async () => {
    const pre = await preflight(listed, "/v1/chat/completions", LOCAL);
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe(LOCAL);
    expect(pre.headers.get("vary")).toBe("Origin, Access-Control-Request-Headers");
    const res = await fetch(`${listed.url}/v1/models`, { headers: { ...authHeaders(user.key, false), origin: APP } });
    expect(res.status).toBe(200);
    expect(corsHeadersOf(res)).toEqual({ "access-control-allow-origin": APP, "access-control-expose-headers": EXPOSED });
    expect(res.headers.get("vary")).toBe("Origin");
  });

  it("gives another origin no Allow-Origin: its preflight is 204 without CORS headers, its request answered without them", async () => {
    const evil = "https://evil.example";
    const pre = await preflight(listed, "/v1/chat/completions", evil);
    expect(pre.status).toBe(204);
    expect(corsHeadersOf(pre)).toEqual({});
    expect(pre.headers.get("vary")).toBe("Origin");
    const res = await fetch(`${listed.url}/v1/models`, { headers: { ...authHeaders(user.key, false), origin: evil } });
    expect(res.status).toBe(200);
    expect(corsHeadersOf(res)).toEqual({});
    expect(res.headers.get("vary")).toBe("Origin");
  });

  it("empty: no CORS at all, an OPTIONS is answered as before", async () => {
    const offUser = await fundedUser(off, 0);
    const pre = await preflight(off, "/v1/chat/completions");
    expect(pre.status).toBe(401);
    expect(corsHeadersOf(pre)).toEqual({});
    const res = await fetch(`${off.url}/v1/models`, { headers: { ...authHeaders(offUser.key, false), origin: APP } });
    expect(res.status).toBe(200);
    expect(corsHeadersOf(res)).toEqual({});
  });
});
