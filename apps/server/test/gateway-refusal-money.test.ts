import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countTokens } from "@gw/providers";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";

const REFUSAL = "I'm sorry, but I can't help with that request because it could cause harm to others.";
/** "hello there" as one user message: its text, the message's framing (4) and the reply's (3) */
const PROMPT_TOKENS = countTokens("hello there") + 4 + 3;

const REASONING = "The user greets me, so a short greeting back is the right answer here.";

const chunk = (delta: unknown) =>
  `data: ${JSON.stringify({ id: "chatcmpl-123", object: "chat.completion.chunk", created: 1694268190, model: "gpt-4o", choices: [{ index: 0, delta, logprobs: null, finish_reason: null }], usage: null })}\n\n`;
/** OpenAI's streamed refusal: the role chunk with `refusal: ""`, then the refusal text in `delta.refusal`. */
const refusalChunks = () => chunk({ role: "assistant", content: null, refusal: "" }) + chunk({ refusal: REFUSAL });
/** The reasoning OpenAI-compatible servers (vLLM, DeepSeek) stream before the answer, in `delta.reasoning_content`. */
const reasoningChunks = () => chunk({ role: "assistant", content: "" }) + chunk({ reasoning_content: REASONING });

describe("a refusal is output: charged like text when the upstream's usage is missing", () => {
  let upstream: Server;
  let server: TestServer;
  /** what the upstream does with the next request */
  let mode: "cut-stream" | "cut-reasoning" | "no-usage" = "cut-stream";

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (mode !== "no-usage") {
          // the refusal (or reasoning) is sent, then the connection breaks before the finish chunk
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(mode === "cut-stream" ? refusalChunks() : reasoningChunks());
          setTimeout(() => res.destroy(), 50);
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({
          id: "chatcmpl-123", object: "chat.completion", created: 1694268190, model: "gpt-4o",
          choices: [{ index: 0, message: { role: "assistant", content: null, refusal: REFUSAL }, logprobs: null, finish_reason: "stop" }],
        }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    server = await startTestServer({ env: { TEXTA_BASE_URL: url, TEXTA_API_KEY: "sk-test", UPSTREAM_MAX_RETRIES: "0" } });
  });
  afterAll(async () => {
    await server.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it("a stream cut after its refusal text was sent is charged for that text, and its usage record counts it", async () => {
    mode = "cut-stream";
    const user = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hello there" }], max_tokens: 100, stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(JSON.stringify(REFUSAL));
    expect(text).toContain("upstream_error");
    const refusalTokens = countTokens(REFUSAL);
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(PROMPT_TOKENS + 2 * refusalTokens);
    const usage = await readJson(await fetch(`${server.url}/api/usage`, { headers: { authorization: `Bearer ${user.key}` } }));
    expect(usage.data[0]).toMatchObject({ status: "partial", completion_tokens: refusalTokens, output_bytes: Buffer.byteLength(REFUSAL) });
  });

  it("a stream cut after reasoning text was sent (reasoning_content) is charged for that text", async () => {
    mode = "cut-reasoning";
    const user = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hello there" }], max_tokens: 100, stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(JSON.stringify(REASONING));
    expect(text).toContain("upstream_error");
    const reasoningTokens = countTokens(REASONING);
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(PROMPT_TOKENS + 2 * reasoningTokens);
  });

  it("a refusal answered without usage is counted with the tokenizer, as an answer's text is", async () => {
    mode = "no-usage";
    const user = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hello there" }], max_tokens: 100 });
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body.choices[0].message).toMatchObject({ content: null, refusal: REFUSAL });
    const refusalTokens = countTokens(REFUSAL);
    expect(body.usage.completion_tokens).toBe(refusalTokens);
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(PROMPT_TOKENS + 2 * refusalTokens);
  });
});
