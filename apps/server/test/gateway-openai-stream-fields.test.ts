import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { fundedUser, postJson, type FundedUser } from "./support/gateway-fixtures";

/** OpenAI's chunk fields that say which backend and tier served the answer, on every chunk (API reference: the chat completion chunk object). */
const FIELDS = { service_tier: "default", system_fingerprint: "fp_44709d6fcb" };

/** The chunks of OpenAI's streaming example, with include_usage: role, two words, the finish, the usage chunk, [DONE]. */
function chatStream(): string {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({ id: "chatcmpl-123", object: "chat.completion.chunk", created: 1694268190, model: "gpt-4o-mini", ...FIELDS, choices, usage })}\n\n`;
  return [
    chunk([{ index: 0, delta: { role: "assistant", content: "", refusal: null }, logprobs: null, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: "Hello" }, logprobs: null, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: " there" }, logprobs: null, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]),
    chunk([], { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 }),
    "data: [DONE]\n\n",
  ].join("");
}

function completionStream(): string {
  const chunk = (choices: unknown[], usage?: unknown) =>
    `data: ${JSON.stringify({ id: "cmpl-123", object: "text_completion", created: 1694268190, model: "gpt-3.5-turbo-instruct", system_fingerprint: FIELDS.system_fingerprint, choices, ...(usage ? { usage } : {}) })}\n\n`;
  return [
    chunk([{ text: "Hello", index: 0, logprobs: null, finish_reason: null }]),
    chunk([{ text: "", index: 0, logprobs: null, finish_reason: "stop" }]),
    chunk([], { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 }),
    "data: [DONE]\n\n",
  ].join("");
}

/** OpenAI's unstreamed completions answer: the same fields at the top level. */
function completionJson(): string {
  return JSON.stringify({
    id: "cmpl-123", object: "text_completion", created: 1694268190, model: "gpt-3.5-turbo-instruct", system_fingerprint: FIELDS.system_fingerprint,
    choices: [{ text: "Hello", index: 0, logprobs: null, finish_reason: "stop" }], usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
  });
}

/** The JSON of each `data:` event but [DONE]. */
const chunksOf = (sse: string): Array<Record<string, unknown>> => sse.trim().split("\n\n")
  .filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);

describe("OpenAI-protocol streams keep the upstream's system_fingerprint and service_tier on every chunk", () => {
  let upstream: Server;
  let server: TestServer;
  let user: FundedUser;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => { body += chunk.toString(); });
      req.on("end", () => {
        if (req.url === "/v1/completions" && (JSON.parse(body) as { stream?: boolean }).stream !== true) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(completionJson());
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(req.url === "/v1/completions" ? completionStream() : chatStream());
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    server = await startTestServer({ env: { TEXTA_BASE_URL: url, TEXTA_API_KEY: "sk-test" } });
    user = await fundedUser(server, 1);
  });
  afterAll(async () => {
    await server.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it("chat completions: the role, delta, finish and usage chunks all carry them, as OpenAI's do", async () => {
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 10, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const chunks = chunksOf(await res.text());
    expect(chunks).toHaveLength(5);
    for (const chunk of chunks) expect(chunk).toMatchObject({ object: "chat.completion.chunk", model: "textA-4", ...FIELDS });
    expect(chunks[1]).toEqual({
      id: chunks[0]?.id, object: "chat.completion.chunk", created: chunks[0]?.created, model: "textA-4", ...FIELDS,
      choices: [{ index: 0, delta: { content: "Hello" }, logprobs: null, finish_reason: null }], usage: null,
    });
    expect(chunks[4]).toMatchObject({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } });
  });

  it("the task endpoint's stream and a legacy completions stream carry them too", async () => {
    const task = await postJson(server, "/api/v1/task", user.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 10, stream: true });
    expect(task.status).toBe(200);
    const taskChunks = chunksOf(await task.text());
    expect(taskChunks).toHaveLength(4);
    for (const chunk of taskChunks) expect(chunk).toMatchObject({ object: "task.completion.chunk", ...FIELDS });

    const completion = await postJson(server, "/v1/completions", user.key, { model: "text-davinci-003", prompt: "hi", max_tokens: 5, stream: true });
    expect(completion.status).toBe(200);
    const completionChunks = chunksOf(await completion.text());
    expect(completionChunks).toHaveLength(2);
    for (const chunk of completionChunks) expect(chunk).toMatchObject({ object: "text_completion", system_fingerprint: FIELDS.system_fingerprint });
  });

  it("an unstreamed legacy completion keeps the upstream's system_fingerprint, as its stream does", async () => {
    const res = await postJson(server, "/v1/completions", user.key, { model: "text-davinci-003", prompt: "hi", max_tokens: 5 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ object: "text_completion", model: "text-davinci-003", system_fingerprint: FIELDS.system_fingerprint, choices: [{ text: "Hello" }] });
  });
});
