// Anthropic Messages adapter against the fake Anthropic upstream over real HTTP.
import { fakeChatReply, FAKE_KEYS } from "@gw/test-support/fake-upstreams/index";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { StreamInterruptedError } from "../src/text-stream";
import type { ChatMessage, ChatStreamEvent } from "../src/types";
import { caught, collect, noAbort, startProviderHarness, type ProviderHarness } from "./helpers";

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

describe("anthropic messages", () => {
  it("extracts the system prompt, sends the version header and maps usage", async () => {
    const result = await h.gateway.chat({ model: h.model("textB-3-haiku"), messages, maxTokens: 100, temperature: 1.6, signal: noAbort() });
    const expected = fakeChatReply(upstreamMessages, 100, "you are terse");
    expect(result).toEqual({ content: expected.content, finishReason: "stop", usage: { promptTokens: expected.promptTokens, completionTokens: expected.completionTokens } });
    const sent = h.fakes.textB.lastRequest();
    expect(sent?.path).toBe("/v1/messages");
    expect(sent?.headers["x-api-key"]).toBe(FAKE_KEYS.textB);
    expect(sent?.headers["anthropic-version"]).toBe("2023-06-01");
    // temperature clamped to Anthropic's 0..1
    expect(sent?.json).toEqual({ model: "textB-3-haiku", max_tokens: 100, messages: upstreamMessages, system: "you are terse", temperature: 1 });
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

  it("fails a truncated stream, keeping the upstream prompt count", async () => {
    h.fakes.textB.failNext(1, { kind: "truncate" });
    const received: ChatStreamEvent[] = [];
    const err = await caught(async () => { for await (const e of h.gateway.chatStream({ model: h.model("textB-3-sonnet"), messages, signal: noAbort() })) received.push(e); });
    expect(err).toBeInstanceOf(StreamInterruptedError);
    expect((err as unknown as StreamInterruptedError).usage.promptTokens).toBe(fakeChatReply(upstreamMessages, undefined, "you are terse").promptTokens);
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
