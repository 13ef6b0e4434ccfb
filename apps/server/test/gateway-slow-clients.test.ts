import { connect } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("streams to slow clients: the upstream is read no faster than the client reads", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  const STALL_MS = 2000;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    // Without backpressure the gateway would read a flood until this limit; with it, the upstream stalls far below.
    server = await startTestServer({ env: { ...fakes.env, UPSTREAM_TIMEOUT_MS: String(STALL_MS), UPSTREAM_MAX_RESPONSE_BYTES: String(96 * MiB) } });
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });
  beforeEach(() => fakes.clearAll());

  const chat = { model: "textA-4", messages: [{ role: "user", content: "tell me everything" }], max_tokens: 100, stream: true };

  it("a stream asked for with `Connection: close` (or over HTTP/1.0) says so and closes the connection once it ended, a replayed one too", async () => {
    const user = await fundedUser(server, 1);
    const body = JSON.stringify({ ...chat, max_tokens: 5 });
    /** The raw answer and whether the gateway closed the connection within 3 s of the request. */
    const raw = (head: string) => new Promise<{ text: string; closed: boolean }>((resolve) => {
      const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
      let text = "";
      const timer = setTimeout(() => { socket.destroy(); resolve({ text, closed: false }); }, 3000);
      socket.on("data", (d) => (text += d));
      socket.on("close", () => { clearTimeout(timer); resolve({ text, closed: true }); });
      socket.write(`${head}\r\nHost: gw\r\nAuthorization: Bearer ${user.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
    for (const head of ["POST /v1/chat/completions HTTP/1.1\r\nConnection: close", "POST /v1/chat/completions HTTP/1.0", "POST /v1/chat/completions HTTP/1.1\r\nConnection: close\r\nIdempotency-Key: closing", "POST /v1/chat/completions HTTP/1.1\r\nConnection: close\r\nIdempotency-Key: closing"]) {
      const { text, closed } = await raw(head);
      const headers = text.slice(0, text.indexOf("\r\n\r\n")).toLowerCase();
      expect(headers).toMatch(/^http\/1\.1 200 ok/);
      expect(headers).toContain("content-type: text/event-stream");
      expect(headers).toContain("connection: close");
      expect(headers).not.toContain("keep-alive");
      expect(text).toContain("data: [DONE]");
      expect(closed).toBe(true);
    }
  });

  it("a client that stops reading holds the upstream back, and after UPSTREAM_TIMEOUT_MS without reading is dropped and charged what was sent", async () => {
    const user = await fundedUser(server, 5);
    fakes.textA.floodBytes = 1024 * MiB;
    const res = await postJson(server, "/v1/chat/completions", user.key, chat);
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    // ... and nothing more: the gateway gives up on the client and cancels the upstream stream
    await vi.waitFor(() => expect(fakes.textA.flood.closed).toBe(true), { timeout: 20_000, interval: 100 });
    // what socket buffers hold on the way, not the whole flood (nor the 96 MiB the gateway would accept)
    expect(fakes.textA.flood.sentBytes).toBeLessThan(64 * MiB);
    await expect((async () => { for (;;) if ((await reader.read()).done) return; })()).rejects.toThrow();
    // The charge settles once the cut is noticed; a cost above what is reserved first tries a top-up (a write).
    const record = await vi.waitFor(async () => {
      const usage = await fetch(`${server.url}/api/usage`, { headers: { authorization: `Bearer ${user.key}` } });
      const first = (await readJson(usage)).data[0];
      expect(first).toMatchObject({ model: "textA-4", status: "partial" });
      return first;
    }, { timeout: 5_000, interval: 50 });
    expect(record.completion_tokens).toBeGreaterThan(0);
    expect(5_000_000 - (await balanceMicros(server, user.userId))).toBe(Math.round(record.cost * 1e6));
  });

  it("a client that leaves while the gateway waits for it to read is let go at once, not after UPSTREAM_TIMEOUT_MS", async () => {
    const user = await fundedUser(server, 5);
    fakes.textA.floodBytes = 1024 * MiB;
    const abort = new AbortController();
    const res = await postJson(server, "/v1/chat/completions", user.key, chat, {}, abort.signal);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    // long enough for the socket buffers to fill and the gateway to be waiting
    await sleep(STALL_MS / 4);
    const left = Date.now();
    abort.abort();
    await vi.waitFor(() => expect(fakes.textA.flood.closed).toBe(true), { timeout: 10_000, interval: 20 });
    expect(Date.now() - left).toBeLessThan(STALL_MS / 2);
    await vi.waitFor(async () => {
      const usage = await fetch(`${server.url}/api/usage`, { headers: { authorization: `Bearer ${user.key}` } });
      expect((await readJson(usage)).data[0]).toMatchObject({ model: "textA-4", status: "partial" });
    }, { timeout: 5_000, interval: 50 });
  });

  it("a client that reads slowly, pausing less than UPSTREAM_TIMEOUT_MS at a time, gets the whole stream", async () => {
    const user = await fundedUser(server, 5);
    fakes.textA.floodBytes = 24 * MiB;
    const res = await postJson(server, "/v1/chat/completions", user.key, chat);
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let tail = "";
    for (let reads = 0; ; reads++) {
      const { done, value } = await reader.read();
      if (done) break;
      tail = (tail + decoder.decode(value, { stream: true })).slice(-64);
      if (reads % 200 === 0) await sleep(STALL_MS / 2);
    }
    expect(tail.trim().endsWith("data: [DONE]")).toBe(true);
    expect(fakes.textA.flood.sentBytes).toBeGreaterThanOrEqual(24 * MiB);
  });
});
