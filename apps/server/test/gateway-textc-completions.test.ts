// /v1/completions on a textC model against an upstream written from Mistral's API reference: it has
// POST /v1/chat/completions and no legacy /v1/completions (CONTRACT 4: textC speaks OpenAI chat completions).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { DEFAULT_PLANS } from "@gw/config";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";

interface Seen { path: string; json: Record<string, unknown> }

describe("POST /v1/completions on textC (a chat-only upstream)", () => {
  const seen: Seen[] = [];
  let upstream: http.Server;
  let server: TestServer;

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const json = JSON.parse(body || "{}") as Record<string, unknown>;
        seen.push({ path: req.url ?? "", json });
        if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
          res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ detail: "Not Found" }));
          return;
        }
        const base = { id: "cmpl-e5cc70bb28c444948073e77776eb30ef", created: 1702256327, model: json.model };
        if (json.stream === true) {
          res.writeHead(200, { "content-type": "text/event-stream" });
          const chunk = (delta: Record<string, unknown>, finish: string | null, extra = {}) =>
            `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
          res.write(chunk({ role: "assistant", content: "" }, null));
          res.write(chunk({ content: "Paris is" }, null));
          res.write(chunk({ content: " the capital" }, "stop", { usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } }));
          res.end("data: [DONE]\n\n");
          return;
        }
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
          ...base, object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "Paris is the capital", tool_calls: null }, finish_reason: "stop" }],
          usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 },
        }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 100_000, concurrentRequests: 1_000 } : p));
    server = await startTestServer({ env: { TEXTC_BASE_URL: url, TEXTC_API_KEY: "mistral-key", UPSTREAM_MAX_RETRIES: "0" }, config: { plans } });
  });
  afterAll(async () => {
    await server.close();
    await new Promise((resolve) => upstream.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  it("answers text_completion from a chat call with the prompt as one user message, charged the upstream's usage", async () => {
    const user = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/completions", user.key, { model: "textC-8x7b", prompt: "The capital of France" });
    expect(res.status).toBe(200);
    expect(res.headers.get("deprecation")).toBe("true");
    expect(res.headers.get("x-request-cost")).toBe("0.000019");
    expect(await readJson(res)).toMatchObject({
      object: "text_completion", model: "textC-8x7b",
      choices: [{ text: "Paris is the capital", index: 0, logprobs: null, finish_reason: "stop" }],
      usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 },
    });
    expect(seen.map((s) => s.path)).toEqual(["/v1/chat/completions"]);
    expect(seen[0]?.json).toMatchObject({ model: "textC-8x7b", messages: [{ role: "user", content: "The capital of France" }], max_tokens: 16 });
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(9 + 2 * 5);
  });

  it("streams text_completion chunks from the chat stream, charged the upstream's usage", async () => {
    const user = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/completions", user.key, { model: "textC-8x22b", prompt: "The capital of France", max_tokens: 20, stream: true });
    expect(res.status).toBe(200);
    const events = (await res.text()).trim().split("\n\n").map((e) => e.slice(6));
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { object: string; choices: Array<{ text: string; finish_reason: string | null }> });
    expect(chunks.every((c) => c.object === "text_completion")).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.text ?? "").join("")).toBe("Paris is the capital");
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    expect(seen.map((s) => s.path)).toEqual(["/v1/chat/completions"]);
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(9 + 2 * 4);
  });

  it("echo, which a chat answer cannot honour, is 400 invalid_parameter naming it, at no cost, never sent", async () => {
    const user = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/completions", user.key, { model: "textC-8x7b", prompt: "hi", echo: true });
    expect(res.status).toBe(400);
    expect((await readJson(res)).error).toMatchObject({ code: "invalid_parameter", type: "invalid_request_error" });
    expect(seen).toHaveLength(0);
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
  });
});
