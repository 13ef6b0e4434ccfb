// Anthropic Messages adapter against the fake Anthropic upstream over real HTTP.
import { fakeChatReply, fakeToolCall, FAKE_KEYS } from "@gw/test-support";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { StreamInterruptedError } from "../src/text-stream";
import type { ChatMessage, ChatStreamEvent } from "../src/types";
import { caught, collect, noAbort, startProviderHarness, type ProviderHarness, unrouted } from "./helpers";

let h: ProviderHarness;
const messages: ChatMessage[] = [
  { role: "system", content: "you are terse" },
  { role: "user", content: "first question" },
  { role: "assistant", content: "first answer" },
  { role: "user", content: "tell me more please" },
];
const upstreamMessages = messages.slice(1);

beforeAll(async () => { h = await startProviderHarness(); });
afterAll(async () => { await h.close(); });
beforeEach(() => { h.fakes.clearAll(); });

const tools = [{ type: "function", function: { name: "lookup", description: "search", parameters: { type: "object", properties: { query: { type: "string" } } } } }];

describe("anthropic tool use, translated from and to OpenAI's tool calls", () => {
  it("sends tools, tool_choice, tool_use and tool_result blocks and images in the Messages shape", async () => {
    const conversation: ChatMessage[] = [
      { role: "user", content: "what is this?", parts: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
      { role: "assistant", content: "", toolCalls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"query\":\"cat\"}" } }] },
      { role: "tool", content: "a cat", toolCallId: "call_1" },
    ];
    const result = await h.gateway.chat({
      model: h.model("textB-3-haiku"), messages: conversation, maxTokens: 50, passthrough: { tools, tool_choice: "required", parallel_tool_calls: false }, signal: noAbort(),
    });
    expect(h.fakes.textB.lastRequest()?.json).toEqual({
      model: "textB-3-haiku", max_tokens: 50,
      messages: [
        { role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }] },
        { role: "assistant", content: [{ type: "tool_use", id: "call_1", name: "lookup", input: { query: "cat" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "a cat" }] },
      ],
      tools: [{ name: "lookup", description: "search", input_schema: tools[0]?.function.parameters }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
    });
    // the tool's answer came last: the fake answers with text
    expect(result.message).toEqual({ role: "assistant", content: "Echo: a cat", refusal: null });
  });

  it("answers tool_use as tool_calls with a null content", async () => {
    const asked: ChatMessage[] = [{ role: "user", content: "find dogs" }];
    const result = await h.gateway.chat({ model: h.model("textB-3-haiku"), messages: asked, passthrough: { tools }, signal: noAbort() });
    const call = fakeToolCall([{ role: "user", content: "find dogs" }], "lookup");
    expect(result).toMatchObject({
      content: "",
      finishReason: "tool_calls",
      message: { role: "assistant", content: null, refusal: null, tool_calls: [{ id: call?.id, type: "function", function: { name: "lookup", arguments: "{\"query\":\"find dogs\"}" } }] },
      usage: { promptTokens: call?.promptTokens, completionTokens: call?.completionTokens },
    });
  });

  it("streams tool_use as OpenAI tool_calls deltas", async () => {
    const events = await collect(h.gateway.chatStream({ model: h.model("textB-3-haiku"), messages: [{ role: "user", content: "find dogs" }], passthrough: { tools }, signal: noAbort() }));
    const deltas = events.filter((e): e is Extract<ChatStreamEvent, { type: "delta" }> => e.type === "delta").map((e) => e.delta);
    const call = fakeToolCall([{ role: "user", content: "find dogs" }], "lookup");
    expect(deltas[0]).toEqual({ content: null, tool_calls: [{ index: 0, id: call?.id, type: "function", function: { name: "lookup", arguments: "" } }] });
    expect(deltas.slice(1)).toEqual(call?.fragments.map((a) => ({ content: null, tool_calls: [{ index: 0, function: { arguments: a } }] })));
    expect(events.at(-1)).toMatchObject({ type: "done", finishReason: "tool_calls", usage: { completionTokens: call?.completionTokens } });
  });

  it("sends a history of tool calls and answers as text when the request defines no tools (Messages refuses their blocks there)", async () => {
    const conversation: ChatMessage[] = [
      { role: "user", content: "weather in Paris" },
      { role: "assistant", content: "Let me look.", toolCalls: [
        { id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"query\":\"Paris\"}" } },
        { id: "call_2", type: "function", function: { name: "lookup", arguments: "" } },
      ] },
      { role: "tool", content: "sunny", toolCallId: "call_1" },
      { role: "tool", content: "", toolCallId: "call_2", parts: [{ type: "text", text: "line one" }, { type: "image_url", image_url: { url: "https://example.com/map.png" } }] },
      { role: "user", content: "so, umbrella or not?" },
    ];
    const result = await h.gateway.chat({ model: h.model("textB-3-haiku"), messages: conversation, maxTokens: 50, signal: noAbort() });
    const sent = [
      { role: "user", content: "weather in Paris" },
      { role: "assistant", content: [
        { type: "text", text: "Let me look." },
        { type: "text", text: "[tool call call_1] lookup({\"query\":\"Paris\"})" },
        { type: "text", text: "[tool call call_2] lookup()" },
      ] },
      { role: "user", content: [
        { type: "text", text: "[tool result call_1]\n" },
        { type: "text", text: "sunny" },
        { type: "text", text: "[tool result call_2]\n" },
        { type: "text", text: "line one" },
        { type: "image", source: { type: "url", url: "https://example.com/map.png" } },
        { type: "text", text: "so, umbrella or not?" },
      ] },
    ];
    expect(h.fakes.textB.lastRequest()?.json).toEqual({ model: "textB-3-haiku", max_tokens: 50, messages: sent });
    const reply = fakeChatReply(sent, 50);
    expect(result).toMatchObject({ content: reply.content, usage: { promptTokens: reply.promptTokens, completionTokens: reply.completionTokens } });
  });

  it("refuses content parts Messages has no form for, before calling upstream", async () => {
    const audio: ChatMessage[] = [{ role: "user", content: "listen", parts: [{ type: "text", text: "listen" }, { type: "input_audio", input_audio: { data: "AA", format: "wav" } }] }];
    const err = await caught(() => h.gateway.chat({ model: h.model("textB-3-haiku"), messages: audio, signal: noAbort() }));
    expect({ code: err.code, message: err.message }).toEqual({
      code: "invalid_parameter", message: "Invalid parameter 'messages': content parts of type 'input_audio' are not supported by model 'textB-3-haiku'.",
    });
    expect(h.fakes.textB.requests).toHaveLength(0);
  });
});

describe("anthropic messages", () => {
  it("extracts the system prompt, sends the version header and maps usage", async () => {
    const result = await h.gateway.chat({ model: h.model("textB-3-haiku"), messages, maxTokens: 100, temperature: 1.6, signal: noAbort() });
    const expected = fakeChatReply(upstreamMessages, 100, "you are terse");
    expect(unrouted(result)).toEqual({
      content: expected.content, message: { role: "assistant", content: expected.content, refusal: null }, finishReason: "stop",
      usage: { promptTokens: expected.promptTokens, completionTokens: expected.completionTokens },
    });
    const sent = h.fakes.textB.lastRequest();
    expect(sent?.path).toBe("/v1/messages");
    expect(sent?.headers["x-api-key"]).toBe(FAKE_KEYS.textB);
    expect(sent?.headers["anthropic-version"]).toBe("2023-06-01");
    // temperature clamped to Anthropic's 0..1
    expect(sent?.json).toEqual({ model: "textB-3-haiku", max_tokens: 100, messages: upstreamMessages, system: "you are terse", temperature: 1 });
  });

  it("trims the trailing whitespace of the final assistant turn (a prefill) only, as Messages requires", async () => {
    const prefilled = (last: ChatMessage): ChatMessage[] => [
      { role: "user", content: "say hi " },
      { role: "assistant", content: "Hi! " },
      { role: "user", content: "and again" },
      last,
    ];
    await h.gateway.chat({ model: h.model("textB-3-haiku"), messages: prefilled({ role: "assistant", content: "Sure, \n" }), maxTokens: 20, signal: noAbort() });
    expect((h.fakes.textB.lastRequest()?.json as { messages: unknown }).messages).toEqual([
      { role: "user", content: "say hi " },
      { role: "assistant", content: "Hi! " },
      { role: "user", content: "and again" },
      { role: "assistant", content: "Sure," },
    ]);
    // parts: the last text block trimmed, one left empty dropped (Messages refuses empty text blocks)
    const parts = [{ type: "text", text: "Well " }, { type: "text", text: "Sure, " }, { type: "text", text: " \t" }];
    const result = await h.gateway.chat({ model: h.model("textB-3-haiku"), messages: prefilled({ role: "assistant", content: "Well Sure,  \t", parts }), maxTokens: 20, signal: noAbort() });
    expect((h.fakes.textB.lastRequest()?.json as { messages: unknown[] }).messages.at(-1)).toEqual({
      role: "assistant", content: [{ type: "text", text: "Well " }, { type: "text", text: "Sure," }],
    });
    expect(result.content).toBe("Echo: and again");
  });

  it("defaults max_tokens to the model's output cap and maps max_tokens to finish_reason length", async () => {
    const result = await h.gateway.chat({ model: { ...h.model("textB-3-opus"), maxOutputTokens: 2 }, messages, signal: noAbort() });
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({ max_tokens: 2 });
    expect(result.finishReason).toBe("length");
  });

  it("streams deltas with usage from message_start and message_delta", async () => {
    const events = await collect(h.gateway.chatStream({ model: h.model("textB-3-sonnet"), messages, signal: noAbort() }));
    const expected = fakeChatReply(upstreamMessages, undefined, "you are terse");
    expect(events.filter((e) => e.type === "delta").map((e) => (e as { content: string }).content)).toEqual(expected.pieces);
    expect(events.at(-1)).toEqual({ type: "done", finishReason: "stop", usage: { promptTokens: expected.promptTokens, completionTokens: expected.completionTokens } });
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({ stream: true });
  });

  it("streams a completion as the chat stream of the prompt as one user message", async () => {
    const events = await collect(h.gateway.completionStream({ model: h.model("textB-2"), prompt: "one two three", maxTokens: 10, signal: noAbort() }));
    const expected = fakeChatReply([{ role: "user", content: "one two three" }], 10);
    expect(events.filter((e) => e.type === "delta").map((e) => (e as { content: string }).content).join("")).toBe(expected.content);
    expect(events.at(-1)).toEqual({ type: "done", finishReason: "stop", usage: { promptTokens: expected.promptTokens, completionTokens: expected.completionTokens } });
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({ stream: true, max_tokens: 10, messages: [{ role: "user", content: "one two three" }] });
  });

  it("fails a truncated stream, keeping the upstream prompt count", async () => {
    h.fakes.textB.failNext(1, { kind: "truncate" });
    const received: ChatStreamEvent[] = [];
    const err = await caught(async () => { for await (const e of h.gateway.chatStream({ model: h.model("textB-3-sonnet"), messages, signal: noAbort() })) received.push(e); });
    expect(err).toBeInstanceOf(StreamInterruptedError);
    const promptTokens = fakeChatReply(upstreamMessages, undefined, "you are terse").promptTokens;
    expect((err as unknown as StreamInterruptedError).usage.promptTokens).toBe(promptTokens);
    // reported by message_start, so the gateway may charge it over its own count
    expect((err as unknown as StreamInterruptedError).reported).toEqual({ promptTokens });
  });

  it("completes a stream cut after message_delta (stop reason and usage), before message_stop", async () => {
    h.fakes.textB.failNext(1, { kind: "truncate", at: "end" });
    const events = await collect(h.gateway.chatStream({ model: h.model("textB-3-sonnet"), messages, signal: noAbort() }));
    const expected = fakeChatReply(upstreamMessages, undefined, "you are terse");
    expect(events.at(-1)).toEqual({ type: "done", finishReason: "stop", usage: { promptTokens: expected.promptTokens, completionTokens: expected.completionTokens } });
  });

  it("retries 529 overloaded, and does not retry 400", async () => {
    h.fakes.textB.failStatus(1, 529);
    await expect(h.gateway.chat({ model: h.model("textB-2"), messages, signal: noAbort() })).resolves.toMatchObject({ finishReason: "stop" });
    expect(h.fakes.textB.requests).toHaveLength(2);
    h.fakes.clearAll();
    h.fakes.textB.failStatus(1, 400);
    const err = await caught(() => h.gateway.chat({ model: h.model("textB-2"), messages, signal: noAbort() }));
    expect(err.code).toBe("invalid_parameter");
    expect(h.fakes.textB.requests).toHaveLength(1);
  });

  it("rejects a wrong-shaped answer", async () => {
    h.fakes.textB.failNext(1, { kind: "wrong-shape" });
    expect((await caught(() => h.gateway.chat({ model: h.model("textB-2"), messages, signal: noAbort() }))).code).toBe("upstream_error");
  });
});
