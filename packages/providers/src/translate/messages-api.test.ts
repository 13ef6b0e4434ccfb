import { AppError } from "@gw/shared";
import { describe, expect, it } from "vitest";
import { chatToMessage, messagesApiBody, messagesToChat, MessagesStreamEncoder } from "./messages-api";
import type { ChatDeltaEvent } from "./chat-call";

const parse = (body: unknown) => messagesApiBody.parse(body);

/** The events an encoder wrote, as [name, data] pairs. */
const eventsOf = (text: string) => text.split("\n\n").filter(Boolean).map((block) => {
  const [eventLine, dataLine] = block.split("\n");
  return [eventLine?.slice("event: ".length), JSON.parse(dataLine?.slice("data: ".length) ?? "{}") as Record<string, unknown>] as const;
});

describe("messagesToChat", () => {
  it("turns tool_result blocks into tool messages before the turn's text, tool_use blocks into calls", () => {
    const chat = messagesToChat(parse({
      model: "m", max_tokens: 5, system: "sys",
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: [{ type: "text", text: "let me see" }, { type: "tool_use", id: "t1", name: "f", input: { a: 1 } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "r" }] }, { type: "text", text: "thanks" }] },
      ],
    }), "openai");
    expect(chat.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "q" },
      { role: "assistant", content: "let me see", toolCalls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{\"a\":1}" } }] },
      { role: "tool", toolCallId: "t1", content: "r" },
      { role: "user", content: "thanks" },
    ]);
  });

  it("maps tool_choice any to required, none to none", () => {
    const tools = [{ name: "f", input_schema: { type: "object" } }];
    const base = { model: "m", max_tokens: 5, tools, messages: [{ role: "user", content: "q" }] };
    expect(messagesToChat(parse({ ...base, tool_choice: { type: "any" } }), "openai").passthrough.tool_choice).toBe("required");
    expect(messagesToChat(parse({ ...base, tool_choice: { type: "none" } }), "openai").passthrough.tool_choice).toBe("none");
  });

  it("refuses a tool_use in a user turn, naming the block", () => {
    const body = parse({ model: "m", max_tokens: 5, messages: [{ role: "user", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }] });
    expect(() => messagesToChat(body, "anthropic")).toThrow(AppError);
    expect(() => messagesToChat(body, "anthropic")).toThrow(/messages\[0\]\.content\[0\]/);
  });
});

describe("chatToMessage", () => {
  it("writes text and tool_use blocks and the stop reason", () => {
    const message = chatToMessage({
      content: "", finishReason: "tool_calls", usage: { promptTokens: 3, completionTokens: 4 },
      message: { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{\"x\":2}" } }] },
    }, { id: "msg_1", model: "m" });
    expect(message).toMatchObject({ content: [{ type: "tool_use", id: "c", name: "f", input: { x: 2 } }], stop_reason: "tool_use", usage: { input_tokens: 3, output_tokens: 4 } });
  });

  it("names the stop sequence when the upstream did", () => {
    const message = chatToMessage({ content: "a", finishReason: "stop", stopSequence: "END", usage: { promptTokens: 1, completionTokens: 1 }, message: {} }, { id: "msg_1", model: "m" });
    expect(message).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "END" });
  });
});

describe("MessagesStreamEncoder", () => {
  it("writes text, then each of two parallel calls as its own tool_use block with input_json_delta", () => {
    const encoder = new MessagesStreamEncoder({ id: "msg_1", model: "m", promptTokens: 7 });
    const call = (index: number, extra: Record<string, unknown>): ChatDeltaEvent => ({ type: "delta", content: "", delta: { tool_calls: [{ index, ...extra }] } });
    let text = encoder.open();
    text += encoder.delta({ type: "delta", content: "hi" });
    text += encoder.delta(call(0, { id: "a", function: { name: "f", arguments: "" } }));
    text += encoder.delta(call(1, { id: "b", function: { name: "g", arguments: "" } }));
    text += encoder.delta(call(0, { function: { arguments: "{\"x\":" } }));
    text += encoder.delta(call(1, { function: { arguments: "{}" } }));
    text += encoder.delta(call(0, { function: { arguments: "1}" } }));
    text += encoder.finish({ type: "done", finishReason: "tool_calls", usage: { promptTokens: 7, completionTokens: 9 } });
    const events = eventsOf(text);
    expect(events.map(([name, data]) => [name, data.index])).toEqual([
      ["message_start", undefined],
      ["content_block_start", 0], ["content_block_delta", 0], ["content_block_stop", 0],
      ["content_block_start", 1], ["content_block_stop", 1],
      ["content_block_start", 2],
      // a fragment of an earlier call names that call's block
      ["content_block_delta", 1], ["content_block_delta", 2], ["content_block_delta", 1],
      ["content_block_stop", 2],
      ["message_delta", undefined], ["message_stop", undefined],
    ]);
    expect(events.at(-2)?.[1]).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { input_tokens: 7, output_tokens: 9 } });
  });
});
