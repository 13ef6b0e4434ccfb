import { describe, expect, it } from "vitest";
import { buildChatRequest, decodeBase64Floats, parseChatResponse, parseChatStreamEvent, parseError } from "./transform";

const endpoint = { baseUrl: "http://up", apiKey: "k" };
const model = { id: "m", type: "text", provider: "textA", protocol: "openai", pricing: {}, ownedBy: "x" } as const;

describe("openai transforms", () => {
  it("merges stream_options from the client but always asks for usage", () => {
    const built = buildChatRequest(endpoint, "m", {
      model, messages: [{ role: "user", content: "hi" }], passthrough: { stream_options: { include_usage: false, extra: 1 } }, signal: new AbortController().signal,
    }, true);
    expect(JSON.parse(built.body)).toMatchObject({ stream: true, stream_options: { include_usage: true, extra: 1 } });
  });

  it("sends n above 1 and reads every choice, in the order of their index", () => {
    const request = { model, messages: [{ role: "user" as const, content: "hi" }], signal: new AbortController().signal };
    expect(JSON.parse(buildChatRequest(endpoint, "m", { ...request, n: 3 }, false).body)).toMatchObject({ n: 3 });
    expect(JSON.parse(buildChatRequest(endpoint, "m", { ...request, n: 1 }, false).body)).not.toHaveProperty("n");
    const parsed = parseChatResponse({
      choices: [
        { index: 1, message: { role: "assistant", content: "b" }, finish_reason: "length" },
        { index: 0, message: { role: "assistant", content: "a" }, finish_reason: "stop", logprobs: { content: [] } },
      ],
      usage: { prompt_tokens: 2, completion_tokens: 6 },
    });
    expect(parsed).toMatchObject({ content: "a", finishReason: "stop", logprobs: { content: [] }, usage: { promptTokens: 2, completionTokens: 6 } });
    expect(parsed.moreChoices).toEqual([{ content: "b", message: { role: "assistant", content: "b" }, finishReason: "length" }]);
  });

  it("reads every choice of a chunk, marking those after the first by their index", () => {
    const chunk = { choices: [{ index: 1, delta: { content: "b" }, finish_reason: null }, { index: 0, delta: { content: "a" }, finish_reason: "stop" }] };
    expect(parseChatStreamEvent({ data: JSON.stringify(chunk) })).toEqual([
      { kind: "delta", content: "b", index: 1 }, { kind: "delta", content: "a" }, { kind: "finish", reason: "stop" },
    ]);
    expect(parseChatStreamEvent({ data: "{\"choices\":[{\"index\":2,\"delta\":{},\"finish_reason\":\"length\"}]}" })).toEqual([{ kind: "finish", reason: "length", index: 2 }]);
  });

  it("reads deltas, finish reasons, usage and the end marker", () => {
    expect(parseChatStreamEvent({ data: "{\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}" })).toEqual([{ kind: "delta", content: "a" }]);
    expect(parseChatStreamEvent({ data: "{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}" })).toEqual([{ kind: "finish", reason: "stop" }]);
    expect(parseChatStreamEvent({ data: "{\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}" }))
      .toEqual([{ kind: "usage", promptTokens: 3, completionTokens: 4 }]);
    expect(parseChatStreamEvent({ data: "[DONE]" })).toEqual([{ kind: "end" }]);
  });

  it("turns an in-stream error object and garbage into upstream_error", () => {
    expect(() => parseChatStreamEvent({ data: "{\"error\":{\"message\":\"boom\"}}" })).toThrow(/boom/);
    expect(() => parseChatStreamEvent({ data: "{nope" })).toThrow(/unexpected stream/);
  });

  it("decodes little-endian float32 base64", () => {
    const buffer = Buffer.alloc(8);
    buffer.writeFloatLE(0.5, 0);
    buffer.writeFloatLE(-2, 4);
    expect(decodeBase64Floats(buffer.toString("base64"))).toEqual([0.5, -2]);
  });

  it("maps statuses: 400 → invalid_parameter, others → upstream_error", () => {
    expect(parseError(400, "{\"error\":{\"message\":\"bad field\"}}")).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("bad field") });
    expect(parseError(404, "<html>")).toMatchObject({ code: "upstream_error" });
  });
});
