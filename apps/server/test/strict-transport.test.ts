// Strict-Transport-Security whenever the public origin is https: PUBLIC_URL https, or a trusted proxy's
// X-Forwarded-Proto: https. Never over an origin that is plain http.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";

const HSTS = "max-age=31536000";

describe("Strict-Transport-Security", () => {
  let httpsPublic: TestServer;
  let behindProxy: TestServer;
  let plain: TestServer;

  beforeAll(async () => {
    [httpsPublic, behindProxy, plain] = await Promise.all([
      startTestServer({ env: { PUBLIC_URL: "https://gateway.example.com", COOKIE_SECURE: "true" } }),
      startTestServer({ env: { PUBLIC_URL: "http://gateway.example.com", TRUST_PROXY: "true" } }),
      startTestServer(),
    ]);
  });

  afterAll(async () => {
    await Promise.all([httpsPublic?.close(), behindProxy?.close(), plain?.close()]);
  });

  const hsts = async (server: TestServer, init: { method?: string; path: string; headers?: Record<string, string> }) =>
    (await fetch(`${server.url}${init.path}`, { method: init.method ?? "GET", headers: init.headers })).headers.get("strict-transport-security");

  it("is on every answer when PUBLIC_URL is https: REST, the gateway's direct routes, errors and the dashboard", async () => {
    expect(await hsts(httpsPublic, { path: "/api/status" })).toBe(HSTS);
    expect(await hsts(httpsPublic, { method: "POST", path: "/v1/chat/completions" })).toBe(HSTS);
    expect(await hsts(httpsPublic, { path: "/api/nope" })).toBe(HSTS);
    expect(await hsts(httpsPublic, { path: "/login" })).toBe(HSTS);
  });

  it("under TRUST_PROXY, is on the answers to requests the proxy says came over https, and only those", async () => {
    expect(await hsts(behindProxy, { path: "/api/status", headers: { "x-forwarded-proto": "https" } })).toBe(HSTS);
    expect(await hsts(behindProxy, { method: "POST", path: "/v1/chat/completions", headers: { "x-forwarded-proto": "https" } })).toBe(HSTS);
    expect(await hsts(behindProxy, { path: "/api/status", headers: { "x-forwarded-proto": "http" } })).toBeNull();
    expect(await hsts(behindProxy, { path: "/api/status" })).toBeNull();
  });

  it("is never sent for an http origin, whatever an untrusted client claims", async () => {
    expect(await hsts(plain, { path: "/api/status" })).toBeNull();
    expect(await hsts(plain, { path: "/api/status", headers: { "x-forwarded-proto": "https" } })).toBeNull();
  });
});
