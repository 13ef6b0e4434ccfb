import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson } from "./support/gateway-fixtures";

const textCost = (prompt: number, completion: number) => prompt + 2 * completion;

/** One chunk of OpenAI's chat stream, as api.openai.com writes it. */
const chunk = (delta: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1700000000, model: "gpt-4", choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] })}\n\n`;

describe("textA: an OpenAI-protocol stream that only sends SSE comments has stalled", () => {
  let upstream: Server;
  let server: TestServer;
  /** what the next request gets: the role chunk, optionally some text, then `: keep-alive` every 300 ms and nothing else */
  let text: string | undefined;
  let requests = 0;

  beforeAll(async () => {
    upstream = createServer((req, res: ServerResponse) => {
      requests++;
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ role: "assistant", content: "", refusal: null }));
      if (text !== undefined) res.write(chunk({ content: text }));
      const timer = setInterval(() => res.write(": keep-alive\n\n"), 300);
      res.on("close", () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    server = await startTestServer({ env: { TEXTA_BASE_URL: url, TEXTA_API_KEY: "sk-test", UPSTREAM_TIMEOUT_MS: "1500" } });
  });
  afterAll(async () => {
    await server.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it("before any output: 504 upstream_timeout after UPSTREAM_TIMEOUT_MS, not retried, at no cost", async () => {
    const user = await fundedUser(server, 1);
    text = undefined;
    requests = 0;
    const started = Date.now();
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 10, stream: true }, {}, AbortSignal.timeout(10_000));
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ error: { message: "The upstream provider did not answer in time.", type: "api_error", code: "upstream_timeout" } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(requests).toBe(1);
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
  });

  it("after output began: the stream ends with an upstream_timeout error event, charged for the prompt and the text sent", async () => {
    const user = await fundedUser(server, 1);
    text = "hello world";
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 10, stream: true }, {}, AbortSignal.timeout(10_000));
    expect(res.status).toBe(200);
    const events = (await res.text()).trim().split("\n\n");
    expect(events.at(-1)).toBe('data: {"error":{"message":"The upstream provider did not answer in time.","type":"api_error","code":"upstream_timeout"}}');
    // the prompt as counted ("hi" in a user message: 8 tokens), "hello world" = 2 tokens; the charge settles after the
    // stream ended, so wait for it (a fixed wait was too short on a loaded machine)
    await vi.waitFor(async () => expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(textCost(8, 2)), { timeout: 10_000, interval: 50 });
  });
});
