// POST /v1/messages and /v1/messages/count_tokens with Anthropic's official SDK (CONTRACT 9), on models of both
// upstream protocols: native for the Anthropic-protocol textB, translated for the OpenAI-protocol textA.
import Anthropic from "@anthropic-ai/sdk";
import type { Tool } from "@anthropic-ai/sdk/resources/messages";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_PLANS } from "@gw/config";
import { fakeChatReply, fakeToolCall } from "@gw/test-support";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";
import { useSdkHarness } from "./support/sdk-harness";

// SPEC 8 prices in micro-dollars: 1 per input token, 2 per output token.
const textCost = (prompt: number, completion: number) => prompt + 2 * completion;

const tools: Tool[] = [{ name: "get_weather", description: "weather of a city", input_schema: { type: "object", properties: { query: { type: "string" } } } }];

const MODELS = ["textA-4", "textB-3-haiku"];

describe("/v1/messages (official @anthropic-ai/sdk)", () => {
  const h = useSdkHarness({ plans: DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 1_000 })) });
  let client: Anthropic;
  beforeAll(() => {
    client = new Anthropic({ apiKey: h.user.key, baseURL: h.server.url, maxRetries: 0 });
  });

  it.each(MODELS)("%s: answers a Message and charges its usage exactly", async (model) => {
    const before = await balanceMicros(h.server, h.user.userId);
    const { data, response } = await client.messages.create({
      model, max_tokens: 50, system: "be brief", messages: [{ role: "user", content: "hello there" }],
    }).withResponse();
    const reply = fakeChatReply([{ role: "user", content: "hello there" }], 50, "be brief");
    expect(data).toMatchObject({
      type: "message", role: "assistant", model, content: [{ type: "text", text: reply.content }],
      stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: reply.promptTokens, output_tokens: reply.completionTokens },
    });
    expect(data.id).toMatch(/^msg_/);
    const cost = textCost(reply.promptTokens, reply.completionTokens);
    expect(response.headers.get("x-request-cost")).toBe((cost / 1e6).toFixed(6));
    expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(cost);
  });

  it.each(MODELS)("%s: max_tokens cut is stop_reason max_tokens", async (model) => {
    const data = await client.messages.create({ model, max_tokens: 2, messages: [{ role: "user", content: "one two three four" }] });
    expect(data.stop_reason).toBe("max_tokens");
    expect(data.content).toEqual([{ type: "text", text: "Echo: one" }]);
  });

  it("an Anthropic upstream's stop_sequence is passed on, streamed or not", async () => {
    h.fakes.textB.stopSequence = "END";
    const data = await client.messages.create({ model: "textB-3-haiku", max_tokens: 50, stop_sequences: ["END"], messages: [{ role: "user", content: "hi" }] });
    expect(data).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "END" });
    const final = await client.messages.stream({ model: "textB-3-haiku", max_tokens: 50, stop_sequences: ["END"], messages: [{ role: "user", content: "hi" }] }).finalMessage();
    expect(final).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "END" });
    // chat completions reads it as OpenAI's "stop"
    const chat = await h.client.chat.completions.create({ model: "textB-3-haiku", max_tokens: 50, stop: ["END"], messages: [{ role: "user", content: "hi" }] });
    expect(chat.choices[0]?.finish_reason).toBe("stop");
  });

  it.each(MODELS)("%s: streams Messages events the SDK assembles, charged exactly", async (model) => {
    const before = await balanceMicros(h.server, h.user.userId);
    const stream = client.messages.stream({ model, max_tokens: 50, messages: [{ role: "user", content: "stream these words" }] });
    const types: string[] = [];
    stream.on("streamEvent", (event) => types.push(event.type));
    const final = await stream.finalMessage();
    const reply = fakeChatReply([{ role: "user", content: "stream these words" }], 50);
    expect(final.content).toEqual([{ type: "text", text: reply.content }]);
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage).toMatchObject({ input_tokens: reply.promptTokens, output_tokens: reply.completionTokens });
    expect(types[0]).toBe("message_start");
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(types).toContain("content_block_start");
    expect(types).toContain("content_block_stop");
    await vi.waitFor(async () => expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(textCost(reply.promptTokens, reply.completionTokens)));
  });

  it.each(MODELS)("%s: returns tool_use blocks, then takes the tool_result back", async (model) => {
    const before = await balanceMicros(h.server, h.user.userId);
    const first = await client.messages.create({ model, max_tokens: 50, tools, messages: [{ role: "user", content: "weather in Paris" }] });
    const call = fakeToolCall([{ role: "user", content: "weather in Paris" }], "get_weather");
    expect(first.stop_reason).toBe("tool_use");
    expect(first.content).toEqual([{ type: "tool_use", id: call?.id, name: "get_weather", input: { query: "weather in Paris" } }]);
    expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(textCost(call?.promptTokens ?? 0, call?.completionTokens ?? 0));
    const second = await client.messages.create({
      model, max_tokens: 50, tools, messages: [
        { role: "user", content: "weather in Paris" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call?.id ?? "", content: "sunny and warm" }] },
      ],
    });
    expect(second.content).toEqual([{ type: "text", text: "Echo: sunny and warm" }]);
    expect(second.stop_reason).toBe("end_turn");
  });

  it.each(MODELS)("%s: streams a tool call as input_json_delta", async (model) => {
    const stream = client.messages.stream({ model, max_tokens: 50, tools, tool_choice: { type: "any" }, messages: [{ role: "user", content: "weather in Rome" }] });
    const fragments: string[] = [];
    stream.on("inputJson", (partial) => fragments.push(partial));
    const final = await stream.finalMessage();
    const call = fakeToolCall([{ role: "user", content: "weather in Rome" }], "get_weather");
    expect(final.stop_reason).toBe("tool_use");
    expect(final.content).toEqual([{ type: "tool_use", id: call?.id, name: "get_weather", input: { query: "weather in Rome" } }]);
    expect(fragments.join("")).toBe(call?.arguments);
  });

  it("translates blocks, tools, tool_choice and stop_sequences for an OpenAI-protocol upstream", async () => {
    await client.messages.create({
      model: "textA-4", max_tokens: 30, system: [{ type: "text", text: "sys" }], tools, tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
      stop_sequences: ["END"], top_p: 0.5, temperature: 0.2, metadata: { user_id: "u1" },
      messages: [{ role: "user", content: [{ type: "text", text: "look:" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }] }],
    // this SDK's types no longer list top_p and top_k; the API still takes them
    } as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({
      max_tokens: 30, temperature: 0.2, top_p: 0.5, stop: ["END"], user: "u1", parallel_tool_calls: false,
      tool_choice: { type: "function", function: { name: "get_weather" } },
      tools: [{ type: "function", function: { name: "get_weather", description: "weather of a city", parameters: tools[0]?.input_schema } }],
      messages: [
        { role: "system", content: [{ type: "text", text: "sys" }] },
        { role: "user", content: [{ type: "text", text: "look:" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
      ],
    });
  });

  it("sends an Anthropic-protocol upstream the request's own fields (top_k, stop_sequences, image url)", async () => {
    await client.messages.create({
      model: "textB-3-haiku", max_tokens: 30, top_k: 5, stop_sequences: ["END"],
      messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/cat.png" } }, { type: "text", text: "what?" }] }],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({
      max_tokens: 30, top_k: 5, stop_sequences: ["END"],
      messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/cat.png" } }, { type: "text", text: "what?" }] }],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming);
  });

  it.each(MODELS)("%s: count_tokens answers input_tokens and charges nothing", async (model) => {
    const before = await balanceMicros(h.server, h.user.userId);
    const counted = await client.messages.countTokens({ model, system: "be brief", tools, messages: [{ role: "user", content: "count these words please" }] });
    expect(counted.input_tokens).toBeGreaterThan(4);
    expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
  });

  it("accepts the key as x-api-key (Anthropic's header) and any anthropic-version", async () => {
    const res = await fetch(`${h.server.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": h.user.key, "anthropic-version": "2099-01-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "textB-3-haiku", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect((await readJson(res)).content[0].text).toBe("Echo: hi");
  });

  describe("errors in Anthropic's envelope, nothing charged", () => {
    const refused = async (body: unknown, status: number, type: string, key = h.user.key) => {
      const before = await balanceMicros(h.server, h.user.userId);
      const res = await postJson(h.server, "/v1/messages", key, body);
      const json = await readJson(res);
      expect({ status: res.status, type: json.type, errorType: json.error?.type }).toEqual({ status, type: "error", errorType: type });
      expect(typeof json.error.message).toBe("string");
      expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
      expect(h.fakes.textA.requests.length + h.fakes.textB.requests.length).toBe(0);
      return json.error.message as string;
    };

    it("max_tokens missing: 400 invalid_request_error naming it", async () => {
      expect(await refused({ model: "textA-4", messages: [{ role: "user", content: "hi" }] }, 400, "invalid_request_error")).toContain("max_tokens");
    });

    it("an unknown block type: 400", async () => {
      expect(await refused({ model: "textB-3-haiku", max_tokens: 5, messages: [{ role: "user", content: [{ type: "video", url: "x" }] }] }, 400, "invalid_request_error")).toContain("type");
    });

    it.each(MODELS)("%s: a tool_use without its tool_result: 400", async (model) => {
      const message = await refused({
        model, max_tokens: 5, tools, messages: [
          { role: "user", content: "weather?" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: {} }] },
          { role: "user", content: "and now?" },
        ],
      }, 400, "invalid_request_error");
      expect(message).toContain("toolu_1");
    });

    it("top_k on an OpenAI-protocol model: 400 naming it", async () => {
      expect(await refused({ model: "textA-4", max_tokens: 5, top_k: 3, messages: [{ role: "user", content: "hi" }] }, 400, "invalid_request_error")).toContain("top_k");
    });

    it("a bad key: 401 authentication_error", async () => {
      await refused({ model: "textA-4", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }, 401, "authentication_error", "ak-live-nope");
    });

    it("more than the balance covers: 402 billing_error", async () => {
      const poor = await fundedUser(h.server, 0);
      const res = await postJson(h.server, "/v1/messages", poor.key, { model: "textA-4", max_tokens: 5, messages: [{ role: "user", content: "hi" }] });
      expect(res.status).toBe(402);
      expect((await readJson(res)).error.type).toBe("billing_error");
    });

    it("the SDK raises its own error classes", async () => {
      const err = await client.messages.create({ model: "nope", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      const denied = await new Anthropic({ apiKey: "ak-live-nope", baseURL: h.server.url, maxRetries: 0 }).messages
        .create({ model: "textA-4", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
    });
  });
});
