// OpenAI-protocol adapter against the fake OpenAI upstream over real HTTP, including the shared client's
// retries, timeouts and aborts.
import { fakeChatReply, fakeCompletion, fakeEmbedding, fakeToolCall, FAKE_KEYS } from "@gw/test-support";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createProviderGateway } from "../src/create-provider-gateway";
import { StreamInterruptedError } from "../src/text-stream";
import { countMessageTokens, countTokens } from "../src/tokens";
import type { ChatMessage, ChatStreamEvent } from "../src/types";
import { caught, collect, noAbort, startProviderHarness, type ProviderHarness, unrouted } from "./helpers";

let h: ProviderHarness;
const messages: ChatMessage[] = [
  { role: "system", content: "be brief" },
  { role: "user", content: "hello there gateway" },
];

beforeAll(async () => { h = await startProviderHarness(); });
afterAll(async () => { await h.close(); });
beforeEach(() => { h.fakes.clearAll(); });

const chat = (extra: Partial<Parameters<ProviderHarness["gateway"]["chat"]>[0]> = {}) =>
  h.gateway.chat({ model: h.model("textA-4"), messages, signal: noAbort(), ...extra });

describe("chat completions", () => {
  it("returns content, finish reason and upstream usage, and sends the right request", async () => {
    const result = await chat({ maxTokens: 50, temperature: 0.5 });
    const expected = fakeChatReply(messages, 50);
    expect(unrouted(result)).toEqual({
      content: expected.content,
      // the upstream's message and extra fields are kept for the client
      message: { role: "assistant", content: expected.content, refusal: null },
      fields: { system_fingerprint: "fp_fake" },
      finishReason: "stop",
      usage: { promptTokens: expected.promptTokens, completionTokens: expected.completionTokens },
    });
    const sent = h.fakes.textA.lastRequest();
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.headers.authorization).toBe(`Bearer ${FAKE_KEYS.textA}`);
    expect(sent?.json).toEqual({ model: "textA-4", messages, max_tokens: 50, temperature: 0.5 });
  });

  it("passes unknown fields through but keeps its own model and stream mode", async () => {
    await chat({ passthrough: { top_p: 0.3, user: "u1", model: "evil", stream: true } });
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ top_p: 0.3, user: "u1", model: "textA-4" });
    expect(h.fakes.textA.lastRequest()?.json).not.toHaveProperty("stream");
  });

  it("uses the configured upstream model name and the textC provider", async () => {
    const model = { ...h.model("textC-8x7b"), upstreamModel: "mixtral-8x7b" };
    await h.gateway.chat({ model, messages, signal: noAbort() });
    expect(h.fakes.textC.lastRequest()?.json).toMatchObject({ model: "mixtral-8x7b" });
    expect(h.fakes.textA.requests).toHaveLength(0);
  });

  it("reports finish_reason length when max_tokens cuts the reply", async () => {
    const result = await chat({ maxTokens: 2 });
    expect(result.finishReason).toBe("length");
    expect(result.usage.completionTokens).toBe(2);
  });

  it("counts usage with the tokenizer when upstream reports none", async () => {
    h.fakes.textA.reportUsage = false;
    const result = await chat();
    expect(result.usage).toEqual({ promptTokens: countMessageTokens(messages), completionTokens: countTokens(result.content) });
  });
});

describe("tool calls and logprobs", () => {
  const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { query: { type: "string" } } } } }];

  it("returns the upstream's tool calls with a null content, and sends the client's messages as they came", async () => {
    const wireMessages = [{ role: "developer", content: "be brief" }, { role: "user", content: "find cats", name: "ann" }];
    const result = await chat({ wireMessages, passthrough: { tools } });
    const call = fakeToolCall([{ role: "user", content: "find cats" }], "lookup");
    expect(result.message).toEqual({
      role: "assistant", content: null, refusal: null,
      tool_calls: [{ id: call?.id, type: "function", function: { name: "lookup", arguments: "{\"query\":\"find cats\"}" } }],
    });
    expect(result.content).toBe("");
    expect(result.finishReason).toBe("tool_calls");
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ messages: wireMessages, tools });
  });

  it("streams tool-call deltas whole, counting their arguments as output when usage is missing", async () => {
    h.fakes.textA.reportUsage = false;
    const events = await collect(h.gateway.chatStream({ model: h.model("textA-4"), messages, passthrough: { tools }, signal: noAbort() }));
    const deltas = events.filter((e): e is Extract<ChatStreamEvent, { type: "delta" }> => e.type === "delta");
    expect(deltas[0]?.delta).toMatchObject({ content: null, tool_calls: [{ index: 0, type: "function", function: { name: "lookup", arguments: "" } }] });
    const args = deltas.map((d) => ((d.delta?.tool_calls as Array<{ function: { arguments: string } }> | undefined)?.[0]?.function.arguments ?? "")).join("");
    expect(args).toBe(JSON.stringify({ query: "hello there gateway" }));
    const done = events.at(-1);
    expect(done).toMatchObject({ type: "done", finishReason: "tool_calls" });
    expect(done?.type === "done" ? done.usage.completionTokens : 0).toBe(countTokens(`lookup${args}`));
  });

  it("keeps logprobs, streamed and not", async () => {
    const result = await chat({ passthrough: { logprobs: true } });
    const expected = fakeChatReply(messages);
    expect(result.logprobs).toEqual({ content: expected.pieces.map((token) => ({ token, logprob: -0.5, bytes: null, top_logprobs: [] })) });
    const events = await collect(h.gateway.chatStream({ model: h.model("textA-4"), messages, passthrough: { logprobs: true }, signal: noAbort() }));
    const first = events.find((e) => e.type === "delta");
    expect(first).toMatchObject({ type: "delta", content: "Echo:", logprobs: { content: [{ token: "Echo:" }] } });
  });
});

describe("chat streaming", () => {
  it("streams deltas and ends with finish reason and upstream usage", async () => {
    const events = await collect(h.gateway.chatStream({ model: h.model("textA-4"), messages, signal: noAbort() }));
    const expected = fakeChatReply(messages);
    const deltas = events.filter((e): e is Extract<ChatStreamEvent, { type: "delta" }> => e.type === "delta");
    expect(deltas.map((e) => e.content)).toEqual(expected.pieces);
    expect(events.at(-1)).toEqual({ type: "done", finishReason: "stop", usage: { promptTokens: expected.promptTokens, completionTokens: expected.completionTokens } });
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("counts usage with the tokenizer when the stream carries none", async () => {
    h.fakes.textA.reportUsage = false;
    const events = await collect(h.gateway.chatStream({ model: h.model("textA-4"), messages, signal: noAbort() }));
    const content = fakeChatReply(messages).content;
    expect(events.at(-1)).toEqual({ type: "done", finishReason: "stop", usage: { promptTokens: countMessageTokens(messages), completionTokens: countTokens(content) } });
  });

  it("completes a stream cut after its finish reason and usage, before [DONE]", async () => {
    h.fakes.textA.failNext(1, { kind: "truncate", at: "end" });
    const events = await collect(h.gateway.chatStream({ model: h.model("textA-4"), messages, signal: noAbort() }));
    const expected = fakeChatReply(messages);
    expect(events.at(-1)).toEqual({ type: "done", finishReason: "stop", usage: { promptTokens: expected.promptTokens, completionTokens: expected.completionTokens } });
  });

  it("fails a truncated stream with the usage produced so far", async () => {
    h.fakes.textA.failNext(1, { kind: "truncate" });
    const received: ChatStreamEvent[] = [];
    const err = await caught(async () => { for await (const e of h.gateway.chatStream({ model: h.model("textA-4"), messages, signal: noAbort() })) received.push(e); });
    expect(err).toBeInstanceOf(StreamInterruptedError);
    expect(err.code).toBe("upstream_error");
    // it was reached and answered, then broke: not "could not be reached"
    expect(err.message).toBe("The upstream stream broke off before it finished.");
    const produced = received.map((e) => (e.type === "delta" ? e.content : "")).join("");
    expect(received.length).toBeGreaterThan(0);
    expect((err as unknown as StreamInterruptedError).usage).toEqual({ promptTokens: countMessageTokens(messages), completionTokens: countTokens(produced) });
    // OpenAI reports usage last: nothing was reported before the cut
    expect((err as unknown as StreamInterruptedError).reported).toEqual({});
    expect(h.fakes.textA.requests).toHaveLength(1);
  });

  it("a stream whose connection fails before any byte, on every attempt, could not be reached", async () => {
    h.fakes.textA.failNext(3, { kind: "reset" });
    const err = await caught(() => collect(h.gateway.chatStream({ model: h.model("textA-4"), messages, signal: noAbort() })));
    expect({ code: err.code, message: err.message }).toEqual({ code: "upstream_error", message: "The upstream provider could not be reached." });
    expect(h.fakes.textA.requests).toHaveLength(3);
  });

  it("retries a 503 before the first byte, then streams", async () => {
    h.fakes.textA.failStatus(1, 503);
    const events = await collect(h.gateway.chatStream({ model: h.model("textA-4"), messages, signal: noAbort() }));
    expect(events.at(-1)?.type).toBe("done");
    expect(h.fakes.textA.requests).toHaveLength(2);
  });

  it("surfaces configuration errors on the first next()", async () => {
    const stream = h.gateway.chatStream({ model: h.model("imageB-1-dev"), messages, signal: noAbort() });
    expect((await caught(() => collect(stream))).code).toBe("unsupported_model");
  });

  it("stops the upstream transfer when the caller aborts mid-stream", async () => {
    h.fakes.textA.chunkDelayMs = 50;
    const controller = new AbortController();
    const received: ChatStreamEvent[] = [];
    const err = await caught(async () => {
      for await (const e of h.gateway.chatStream({ model: h.model("textA-4"), messages, signal: controller.signal })) {
        received.push(e);
        controller.abort();
      }
    });
    expect(received).toHaveLength(1);
    expect(err).toBeInstanceOf(StreamInterruptedError);
    expect((err as unknown as StreamInterruptedError).usage.completionTokens).toBe(countTokens((received[0] as { content: string }).content));
  });
});

describe("completions and embeddings", () => {
  it("completes a prompt", async () => {
    const result = await h.gateway.completion({ model: h.model("text-davinci-003"), prompt: "say this", maxTokens: 10, signal: noAbort() });
    const expected = fakeCompletion("say this", 10);
    expect(unrouted(result)).toEqual({ text: expected.content, finishReason: "stop", usage: { promptTokens: expected.promptTokens, completionTokens: expected.completionTokens } });
    expect(h.fakes.textA.lastRequest()?.path).toBe("/v1/completions");
  });

  it("streams a completion from the upstream's legacy completions stream, with its usage", async () => {
    const events = await collect(h.gateway.completionStream({ model: h.model("text-davinci-003"), prompt: "say this now", maxTokens: 10, passthrough: { stream: false }, signal: noAbort() }));
    const expected = fakeCompletion("say this now", 10);
    expect(events).toEqual([
      ...expected.pieces.map((content) => ({ type: "delta", content })),
      { type: "done", finishReason: "stop", usage: { promptTokens: expected.promptTokens, completionTokens: expected.completionTokens } },
    ]);
    const sent = h.fakes.textA.lastRequest();
    expect(sent?.path).toBe("/v1/completions");
    expect(sent?.json).toEqual({ model: "text-davinci-003", prompt: "say this now", max_tokens: 10, stream: true, stream_options: { include_usage: true } });
  });

  it("fails a truncated completion stream with the usage produced so far", async () => {
    h.fakes.textA.failNext(1, { kind: "truncate" });
    const received: ChatStreamEvent[] = [];
    const err = await caught(async () => {
      for await (const e of h.gateway.completionStream({ model: h.model("text-davinci-003"), prompt: "one two three four five six", signal: noAbort() })) received.push(e);
    });
    expect(err).toBeInstanceOf(StreamInterruptedError);
    const produced = received.map((e) => (e.type === "delta" ? e.content : "")).join("");
    expect(produced.length).toBeGreaterThan(0);
    expect((err as unknown as StreamInterruptedError).usage).toEqual({ promptTokens: countTokens("one two three four five six"), completionTokens: countTokens(produced) });
  });

  it("embeds several inputs in order, decoding base64 from upstream", async () => {
    const result = await h.gateway.embeddings({ model: h.model("text-embedding-ada-002"), input: ["one two", "three"], signal: noAbort() });
    expect(unrouted(result)).toEqual({ vectors: [fakeEmbedding("one two"), fakeEmbedding("three")], usage: { promptTokens: 3 } });
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ encoding_format: "base64", input: ["one two", "three"] });
  });

  it("rejects a wrong-shaped embeddings answer", async () => {
    h.fakes.textA.failNext(1, { kind: "wrong-shape" });
    const err = await caught(() => h.gateway.embeddings({ model: h.model("text-embedding-ada-002"), input: ["x"], signal: noAbort() }));
    expect(err.code).toBe("upstream_error");
  });
});

describe("failures", () => {
  it("retries 503 then succeeds", async () => {
    h.fakes.textA.failStatus(1, 503);
    await expect(chat()).resolves.toMatchObject({ finishReason: "stop" });
    expect(h.fakes.textA.requests).toHaveLength(2);
  });

  it("gives up after 3 attempts with upstream_error 502", async () => {
    h.fakes.textA.failStatus(5, 500);
    const err = await caught(() => chat());
    expect({ code: err.code, status: err.status }).toEqual({ code: "upstream_error", status: 502 });
    expect(h.fakes.textA.requests).toHaveLength(3);
  });

  it("retries 429 honouring a short Retry-After", async () => {
    h.fakes.textA.failStatus(1, 429, { headers: { "retry-after": "0" } });
    await expect(chat()).resolves.toMatchObject({ finishReason: "stop" });
    expect(h.fakes.textA.requests).toHaveLength(2);
  });

  it("does not wait for a long Retry-After", async () => {
    h.fakes.textA.failStatus(1, 429, { headers: { "retry-after": "120" } });
    expect((await caught(() => chat())).code).toBe("upstream_error");
    expect(h.fakes.textA.requests).toHaveLength(1);
  });

  it("does not retry a 400 and reports it as invalid_parameter with the upstream message", async () => {
    h.fakes.textA.failStatus(3, 400);
    const err = await caught(() => chat());
    expect({ code: err.code, status: err.status }).toEqual({ code: "invalid_parameter", status: 400 });
    expect(err.message).toContain("forced status 400");
    expect(h.fakes.textA.requests).toHaveLength(1);
  });

  it("maps an upstream 401 to upstream_error (our key, not the caller's)", async () => {
    h.fakes.textA.failStatus(1, 401);
    expect((await caught(() => chat())).code).toBe("upstream_error");
  });

  it("retries connection resets, then fails with upstream_error", async () => {
    h.fakes.textA.failNext(3, { kind: "reset" });
    expect((await caught(() => chat())).code).toBe("upstream_error");
    expect(h.fakes.textA.requests).toHaveLength(3);
  });

  it("recovers from one reset", async () => {
    h.fakes.textA.failNext(1, { kind: "reset" });
    await expect(chat()).resolves.toMatchObject({ finishReason: "stop" });
  });

  it("answers upstream_timeout 504 when upstream hangs", async () => {
    h.fakes.textA.failNext(1, { kind: "hang" });
    const started = performance.now();
    const err = await caught(() => chat());
    expect({ code: err.code, status: err.status }).toEqual({ code: "upstream_timeout", status: 504 });
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it("times out a stream whose headers never come", async () => {
    h.fakes.textA.failNext(1, { kind: "hang" });
    expect((await caught(() => collect(h.gateway.chatStream({ model: h.model("textA-4"), messages, signal: noAbort() })))).code).toBe("upstream_timeout");
  });

  it("rejects garbage JSON and wrong shapes with upstream_error", async () => {
    h.fakes.textA.failNext(1, { kind: "garbage" });
    expect((await caught(() => chat())).code).toBe("upstream_error");
    h.fakes.textA.failNext(1, { kind: "wrong-shape" });
    expect((await caught(() => chat())).code).toBe("upstream_error");
  });

  it("retries a JSON body that broke off (nothing reached the client), then rejects it as an answer that broke off", async () => {
    h.fakes.textA.failNext(1, { kind: "truncate" });
    await expect(chat()).resolves.toMatchObject({ finishReason: "stop" });
    expect(h.fakes.textA.requests).toHaveLength(2);
    h.fakes.textA.failNext(3, { kind: "truncate" });
    const err = await caught(() => chat());
    // the provider was reached and began answering: not "could not be reached"
    expect({ code: err.code, message: err.message }).toEqual({ code: "upstream_error", message: "The upstream answer broke off before it finished." });
    expect(h.fakes.textA.requests).toHaveLength(5);
  });

  it("cancels the upstream request when the caller aborts", async () => {
    h.fakes.textA.failNext(1, { kind: "hang" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    const err = await caught(() => chat({ signal: controller.signal }));
    expect(err.code).toBe("upstream_error");
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("answers provider_not_configured 503 without an upstream", async () => {
    const gateway = createProviderGateway({ ...h.config, providers: { ...h.config.providers, textA: {} } });
    try {
      const err = await caught(() => gateway.chat({ model: h.model("textA-4"), messages, signal: noAbort() }));
      expect({ code: err.code, status: err.status }).toEqual({ code: "provider_not_configured", status: 503 });
    } finally {
      await gateway.close();
    }
  });
});
