import { describe, expect, it } from "vitest";
import { chatToOutcome, responseObject, responsesApiBody, responsesToChat, ResponsesStreamEncoder } from "./responses-api";

const parse = (body: unknown) => responsesApiBody.parse(body);

const eventsOf = (text: string) => text.split("\n\n").filter(Boolean).map((block) => JSON.parse(block.split("\n")[1]?.slice("data: ".length) ?? "{}") as Record<string, unknown>);

describe("responsesToChat", () => {
  it("puts instructions first, then the stored conversation, then the input; consecutive calls are one assistant turn", () => {
    const chat = responsesToChat(parse({
      model: "m", instructions: "be brief",
      input: [
        { type: "function_call", call_id: "a", name: "f", arguments: "{}" },
        { type: "function_call", call_id: "b", name: "g", arguments: "{}" },
        { type: "function_call_output", call_id: "a", output: "1" },
        { type: "function_call_output", call_id: "b", output: "2" },
        { role: "user", content: [{ type: "input_text", text: "look " }, { type: "input_image", image_url: "https://x/y.png" }] },
      ],
    }), [{ role: "user", content: "before" }]);
    expect(chat.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "before" },
      { role: "assistant", content: "", toolCalls: [{ id: "a", type: "function", function: { name: "f", arguments: "{}" } }, { id: "b", type: "function", function: { name: "g", arguments: "{}" } }] },
      { role: "tool", toolCallId: "a", content: "1" },
      { role: "tool", toolCallId: "b", content: "2" },
      { role: "user", content: "look ", parts: [{ type: "text", text: "look " }, { type: "image_url", image_url: { url: "https://x/y.png" } }] },
    ]);
  });

  it("maps tools, tool_choice and text.format to chat fields", () => {
    const chat = responsesToChat(parse({
      model: "m", input: "q", tools: [{ type: "function", name: "f", parameters: { type: "object" } }], tool_choice: { type: "function", name: "f" },
      text: { format: { type: "json_object" } },
    }), []);
    expect(chat.passthrough).toEqual({
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
      tool_choice: { type: "function", function: { name: "f" } },
      response_format: { type: "json_object" },
    });
  });

  it("refuses an output for no call", () => {
    expect(() => responsesToChat(parse({ model: "m", input: [{ type: "function_call_output", call_id: "z", output: "1" }] }), [])).toThrow(/'z'/);
  });
});

describe("outcome and stream", () => {
  it("a cut answer is incomplete with reason max_output_tokens", () => {
    const outcome = chatToOutcome({ content: "ab", finishReason: "length", usage: { promptTokens: 1, completionTokens: 2 }, message: {} });
    expect(responseObject(parse({ model: "m", input: "q" }), { id: "resp_1", createdAt: 1, model: "m", store: true }, outcome)).toMatchObject({
      status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
    });
  });

  it("numbers events, and stores the outcome before the completed event", async () => {
    const body = parse({ model: "m", input: "q" });
    let stored: unknown;
    const encoder = new ResponsesStreamEncoder((outcome) => responseObject(body, { id: "resp_1", createdAt: 1, model: "m", store: true }, outcome), async (outcome) => {
      stored = outcome.assistant;
    });
    let text = encoder.open() + encoder.delta({ type: "delta", content: "a" });
    const done = { type: "done" as const, finishReason: "stop", usage: { promptTokens: 1, completionTokens: 1 } };
    await encoder.complete(done);
    text += encoder.finish(done);
    const events = eventsOf(text);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)).toMatchObject({ type: "response.completed", response: { status: "completed", output: [{ type: "message", content: [{ text: "a" }] }] } });
    expect(stored).toEqual({ role: "assistant", content: "a" });
  });
});
