import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "../harness";
import { fundedUser, type FundedUser } from "../support/gateway-fixtures";
import { launchBrowser } from "./browser-support";

interface Seen {
  status: number;
  headers: Record<string, string | null>;
  body: unknown;
}

// A page on another origin calls the gateway with an API key, as a browser app calls OpenAI's API: the browser's own
// CORS checks (preflight for the SDK's headers, exposed headers) decide what the page can read.
describe("a browser app on another origin calls the gateway with an API key", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  let site: Server;
  let browser: Browser;
  let page: Page;
  let user: FundedUser;

  beforeAll(async () => {
    [fakes, browser] = await Promise.all([startFakeUpstreams(), launchBrowser()]);
    server = await startTestServer({ env: fakes.env });
    user = await fundedUser(server, 5);
    site = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>app</title>"));
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    await server?.close();
    await fakes?.close();
  });

  /** fetch from the page; a request the browser blocks comes back as its error message */
  const call = (path: string, headers: Record<string, string>, body?: string): Promise<Seen | string> =>
    page.evaluate(async ({ url, headers, body }) => {
      try {
        const res = await fetch(url, { method: body === undefined ? "GET" : "POST", headers, body });
        const names = ["x-request-id", "x-request-cost", "x-ratelimit-limit", "x-ratelimit-remaining", "retry-after", "x-should-retry"];
        return { status: res.status, headers: Object.fromEntries(names.map((n) => [n, res.headers.get(n)])), body: await res.json() as unknown };
      } catch (err) {
        return String(err);
      }
    }, { url: `${server.url}${path}`, headers, body });

  const sdkHeaders = (key?: string) => ({
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    "content-type": "application/json",
    "x-stainless-lang": "js",
    "idempotency-key": `browser-${Math.random()}`,
  });
  const chat = JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "hello" }], max_tokens: 5 });

  it("reads a chat completion and the gateway's headers", async () => {
    const seen = await call("/v1/chat/completions", sdkHeaders(user.key), chat);
    expect(seen).toMatchObject({ status: 200, body: { object: "chat.completion" } });
    const { headers } = seen as Seen;
    expect(headers["x-request-id"]).toMatch(/^req/);
    expect(headers["x-request-cost"]).toMatch(/^\d+\.\d{6}$/);
    expect(headers["x-ratelimit-limit"]).toMatch(/^\d+$/);
  });

  it("reads a refusal: 401 in the spec's shape", async () => {
    const seen = await call("/api/v1/task", sdkHeaders(), chat);
    expect(seen).toMatchObject({ status: 401, body: { error: { code: "invalid_api_key" } } });
  });

  it("reads x-should-retry: false on a key reused for another request (409), so a browser SDK does not retry it", async () => {
    const headers = { ...sdkHeaders(user.key), "idempotency-key": `browser-reuse-${Math.random()}` };
    expect(await call("/v1/chat/completions", headers, chat)).toMatchObject({ status: 200 });
    const seen = await call("/v1/chat/completions", headers, JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "other" }], max_tokens: 5 }));
    expect(seen).toMatchObject({ status: 409, headers: { "x-should-retry": "false" }, body: { error: { code: "conflict" } } });
  });

  it("cannot read a session route", async () => {
    expect(await call("/api/keys", {})).toMatch(/TypeError: Failed to fetch/);
  });
});
