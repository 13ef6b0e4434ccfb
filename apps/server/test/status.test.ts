import httpServer from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk arbitrary JSON
type JsonResponse = Omit<Response, "json"> & { json(): Promise<any> };
const http = (input: string, init?: RequestInit): Promise<JsonResponse> => fetch(input, init);

const isIso = (value: unknown) => typeof value === "string" && new Date(value).toISOString() === value;

describe("status (SPEC 4.9, CONTRACT 8)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("GET /api/status → 200 {status: ok, message}, never cached, no auth", async () => {
    const started = performance.now();
    const res = await http(`${server.url}/api/status`);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await res.json()).toEqual({ status: "ok", message: expect.any(String) });
  });

  it("GET and POST /api/example answer the same", async () => {
    const get = await http(`${server.url}/api/example`);
    const postEmpty = await http(`${server.url}/api/example`, { method: "POST" });
    const postJson = await http(`${server.url}/api/example`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    for (const res of [get, postEmpty, postJson]) {
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: "ok", message: expect.any(String) });
    }
  });

  it("GET /api/status/external lists the four dependencies with a real database check", async () => {
    const res = await http(`${server.url}/api/status/external`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(["deployments", "overall_status", "services", "status", "timestamp"]);
    expect(Object.keys(body.services).sort()).toEqual(["database", "payment_provider", "speech_provider", "text_provider"]);
    expect(body.services.database).toEqual({ status: "healthy", response_time: expect.any(Number), last_check: expect.any(String) });
    expect(Number.isInteger(body.services.database.response_time)).toBe(true);
    expect(isIso(body.services.database.last_check)).toBe(true);
    expect(isIso(body.timestamp)).toBe(true);
    expect(["healthy", "degraded", "unhealthy", "unknown"]).toContain(body.overall_status);
  });

  it("bounds a hanging check (unhealthy, answer within 500 ms) and caches the report for 30 s", async () => {
    // a dependency that never answers, registered the way features register theirs
    server.app.context.healthChecks.register("text_provider", () => new Promise(() => undefined));
    const timed = async () => {
      const started = performance.now();
      const res = await http(`${server.url}/api/status/external`);
      expect(performance.now() - started).toBeLessThan(500);
      expect(res.status).toBe(200);
      return res.json();
    };
    const first = await timed();
    expect(first.services.text_provider).toMatchObject({ status: "unhealthy", issue: expect.any(String) });
    expect(first.services.database.status).toBe("healthy");
    expect(first.overall_status).toBe("degraded");
    expect(first.status).toBe("degraded");

    server.clock.advance(29_000);
    expect((await timed()).timestamp).toBe(first.timestamp);
    server.clock.advance(1_000);
    const fresh = await timed();
    expect(fresh.timestamp).not.toBe(first.timestamp);
    expect(fresh.services.text_provider.status).toBe("unhealthy");
  });

  it("unknown status paths stay 404 not_found", async () => {
    const res = await http(`${server.url}/api/status/nope`);
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe("not_found");
  });
});

describe("status with the database down", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    await server.db.close();
  });
  afterAll(async () => {
    await server.close();
  });

  it("GET /api/status → 503 in the status form", async () => {
    const started = performance.now();
    const res = await http(`${server.url}/api/status`);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(res.status).toBe(503);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ status: "error", message: expect.any(String), error_code: "service_unavailable" });
  });

  it("GET /api/example → the same 503", async () => {
    const res = await http(`${server.url}/api/example`);
    expect(res.status).toBe(503);
    expect((await res.json()).error_code).toBe("service_unavailable");
  });

  it("GET /api/status/external reports the database unhealthy", async () => {
    const res = await http(`${server.url}/api/status/external`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.services.database).toMatchObject({ status: "unhealthy", issue: "the database did not answer" });
    expect(body.overall_status).toBe("unhealthy");
    expect(body.status).toBe("error");
  });
});

describe("status with the payment processor refusing the secret key", () => {
  // Not a key: a made-up value in live-mode form (prefix + placeholder), which stripe-mock refuses as Stripe would
  const placeholder = "PLACEHOLDER0000";
  const secretKey = `sk_${"live"}_${placeholder}`;
  let server: TestServer;
  beforeAll(async () => {
    // stripe-mock refuses a live-mode key the way Stripe refuses an unknown one (401), quoting it in its message
    server = await startTestServer({ env: { STRIPE_SECRET_KEY: secretKey } });
  });
  afterAll(async () => {
    await server.close();
  });

  it("GET /api/status/external says the key was refused without quoting the processor (no part of the key)", async () => {
    const res = await http(`${server.url}/api/status/external`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(placeholder);
    expect(JSON.parse(text).services.payment_provider).toEqual({
      status: "unhealthy",
      response_time: expect.any(Number),
      last_check: expect.any(String),
      issue: "payment processor refused the API key (HTTP 401)",
    });
  });
});

describe("status with one text provider answering and another hanging", () => {
  let server: TestServer;
  let textA: httpServer.Server;
  let textB: net.Server;
  const listen = async (s: httpServer.Server | net.Server) => {
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };
  beforeAll(async () => {
    // OpenAI's GET /v1/models; Messages' upstream accepts the connection and never answers
    textA = httpServer.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "gpt-4o", object: "model", created: 1, owned_by: "openai" }] }));
    });
    textB = net.createServer((socket) => socket.on("error", () => undefined));
    const [a, b] = [await listen(textA), await listen(textB)];
    server = await startTestServer({ env: { TEXTA_BASE_URL: a, TEXTA_API_KEY: "sk-a", TEXTB_BASE_URL: b, TEXTB_API_KEY: "sk-b" } });
  });
  afterAll(async () => {
    await server.close();
    textA.close();
    textB.close();
  });

  it("text_provider is degraded and names the hanging provider, answered within 500 ms", async () => {
    const started = performance.now();
    const res = await http(`${server.url}/api/status/external`);
    expect(performance.now() - started).toBeLessThan(500);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.services.text_provider).toEqual({ status: "degraded", response_time: expect.any(Number), last_check: expect.any(String), issue: "textB: timed out" });
    expect(body.overall_status).toBe("degraded");
  });
});

describe("status with upstreams and the payment processor answering 200 in a shape that is not their API's", () => {
  let server: TestServer;
  let upstream: httpServer.Server;
  beforeAll(async () => {
    // valid JSON, but no model list or voice list: a wrong base URL or a proxy's page, not the provider
    upstream = httpServer.createServer((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      // Stripe's GET /v1/balance answered with a page that is not JSON at all
      res.end(req.url?.startsWith("/v1/balance") ? "<html>maintenance</html>" : "[1,2]");
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    server = await startTestServer({ env: { TEXTA_BASE_URL: url, TEXTA_API_KEY: "sk-a", SPEECH_BASE_URL: url, SPEECH_API_KEY: "xi-a", STRIPE_API_BASE: url } });
  });
  afterAll(async () => {
    await server.close();
    upstream.close();
  });

  it("text_provider, speech_provider and payment_provider are unhealthy, not healthy (nor the processor unreachable)", async () => {
    const body = await (await http(`${server.url}/api/status/external`)).json();
    expect(body.services.text_provider).toMatchObject({ status: "unhealthy", issue: "The upstream provider sent an unexpected models answer." });
    expect(body.services.speech_provider).toMatchObject({ status: "unhealthy", issue: "The upstream provider sent an unexpected voices answer." });
    expect(body.services.payment_provider).toMatchObject({ status: "unhealthy", issue: "payment processor sent an invalid answer" });
    expect(body.overall_status).toBe("degraded");
  });
});
