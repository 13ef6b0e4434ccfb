import { readCookie, SESSION_COOKIE } from "@gw/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk arbitrary JSON
type JsonResponse = Omit<Response, "json"> & { json(): Promise<any> };
const http = (input: string, init?: RequestInit): Promise<JsonResponse> => fetch(input, init);

describe("rate limits of SPEC 8 (configurable, CONTRACT 7)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { LIMIT_STATUS: "3/60", LIMIT_STATUS_EXTERNAL: "2/60", LIMIT_KEYS_CREATE: "2/60", LIMIT_KEYS_LIST: "2/60" } });
    server.app.context.sessions = {
      fromRequest: async (req) => {
        const userId = readCookie(req.get("cookie"), SESSION_COOKIE);
        return userId ? { userId, sessionId: `ses_${userId}`, emailVerified: true } : null;
      },
      isActive: async () => true,
    };
  });
  afterAll(async () => {
    await server.close();
  });

  const expect429 = async (res: JsonResponse, limit: number) => {
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(res.headers.get("x-ratelimit-limit")).toBe(String(limit));
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000 - 5);
    const body = await res.json();
    expect(body).toEqual({ error: { message: expect.stringMatching(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/), type: "rate_limit_error", code: "rate_limit_exceeded" } });
  };

  it("GET /api/status per IP: X-RateLimit headers, then 429 with Retry-After", async () => {
    for (let i = 0; i < 3; i += 1) {
      const res = await http(`${server.url}/api/status`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("3");
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(2 - i));
    }
    await expect429(await http(`${server.url}/api/status`), 3);
  });

  it("GET /api/status/external has its own budget", async () => {
    expect((await http(`${server.url}/api/status/external`)).status).toBe(200);
    expect((await http(`${server.url}/api/status/external`)).status).toBe(200);
    await expect429(await http(`${server.url}/api/status/external`), 2);
  });

  it("key routes count per account", async () => {
    const as = (userId: string) => ({ cookie: `${SESSION_COOKIE}=${userId}`, "content-type": "application/json" });
    const create = (userId: string) => http(`${server.url}/api/keys`, { method: "POST", headers: as(userId), body: JSON.stringify({ name: "k" }) });
    expect((await create("usr_1")).status).toBe(201);
    expect((await create("usr_1")).status).toBe(201);
    await expect429(await create("usr_1"), 2);
    expect((await create("usr_2")).status).toBe(201);
    expect((await http(`${server.url}/api/keys`, { headers: as("usr_1") })).status).toBe(200);
    expect((await http(`${server.url}/api/keys`, { headers: as("usr_1") })).status).toBe(200);
    await expect429(await http(`${server.url}/api/keys`, { headers: as("usr_1") }), 2);
  });

  it("an unauthenticated key request is refused before it is counted", async () => {
    for (let i = 0; i < 4; i += 1) expect((await http(`${server.url}/api/keys`)).status).toBe(401);
  });
});

describe("client IP behind a proxy (TRUST_PROXY)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { LIMIT_STATUS: "1/60", TRUST_PROXY: "true" } });
  });
  afterAll(async () => {
    await server.close();
  });

  it("a 429 over /api/trpc carries X-RateLimit-* and Retry-After like the REST route", async () => {
    const from = (ip: string) => http(`${server.url}/api/trpc/status.get`, { headers: { "x-forwarded-for": ip } });
    const accepted = await from("203.0.113.9");
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get("x-ratelimit-remaining")).toBe("0");
    const refused = await from("203.0.113.9");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("x-ratelimit-limit")).toBe("1");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(refused.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000 - 5);
  });

  it("counts per X-Forwarded-For client when the proxy is trusted", async () => {
    const from = (ip: string) => http(`${server.url}/api/status`, { headers: { "x-forwarded-for": ip } });
    expect((await from("203.0.113.1")).status).toBe(200);
    expect((await from("203.0.113.1")).status).toBe(429);
    expect((await from("203.0.113.2")).status).toBe(200);
  });

  it("counts an IPv6 client by its /64 network, and an IPv4-mapped address as the IPv4 address", async () => {
    const from = (ip: string) => http(`${server.url}/api/status`, { headers: { "x-forwarded-for": ip } });
    expect((await from("2001:db8:1:2::1")).status).toBe(200);
    // another address of the same /64, written out in full: the same client
    expect((await from("2001:0db8:0001:0002:ffff:0:0:7")).status).toBe(429);
    expect((await from("2001:db8:1:3::1")).status).toBe(200);
    expect((await from("203.0.113.3")).status).toBe(200);
    expect((await from("::ffff:203.0.113.3")).status).toBe(429);
  });
});
