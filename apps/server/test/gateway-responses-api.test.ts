// POST/GET/DELETE /v1/responses with the official openai SDK and the Vercel AI SDK's default `openai(id)` provider
// (which speaks the Responses API), on models of both upstream protocols (CONTRACT 9).
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, streamText, tool } from "ai";
import OpenAI from "openai";
import type { FunctionTool } from "openai/resources/responses/responses";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_PLANS } from "@gw/config";
import { fakeChatReply, fakeToolCall } from "@gw/test-support";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";
import { useSdkHarness } from "./support/sdk-harness";

// SPEC 8 prices in micro-dollars: 1 per input token, 2 per output token.
const textCost = (prompt: number, completion: number) => prompt + 2 * completion;

const tools: FunctionTool[] = [{ type: "function", name: "get_weather", description: "weather of a city", parameters: { type: "object", properties: { query: { type: "string" } } }, strict: false }];

const MODELS = ["textA-4", "textB-3-haiku"];

describe("/v1/responses", () => {
  const h = useSdkHarness({ plans: DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 1_000 })) });

  describe("official openai SDK", () => {
    it.each(MODELS)("%s: answers a Response and charges its usage exactly", async (model) => {
      const before = await balanceMicros(h.server, h.user.userId);
      const { data, response } = await h.client.responses.create({ model, instructions: "be brief", input: "hello there", max_output_tokens: 50 }).withResponse();
      const reply = fakeChatReply([{ role: "user", content: "hello there" }], 50, "be brief");
      expect(data).toMatchObject({
        object: "response", status: "completed", model, instructions: "be brief", store: true,
        output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.content }] }],
        usage: { input_tokens: reply.promptTokens, output_tokens: reply.completionTokens, total_tokens: reply.promptTokens + reply.completionTokens },
      });
      expect(data.id).toMatch(/^resp_/);
      expect(data.output_text).toBe(reply.content);
      const cost = textCost(reply.promptTokens, reply.completionTokens);
      expect(response.headers.get("x-request-cost")).toBe((cost / 1e6).toFixed(6));
      expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(cost);
      await vi.waitFor(async () => {
        const usage = await readJson(await fetch(`${h.server.url}/api/usage`, { headers: { authorization: `Bearer ${h.user.key}` } }));
        expect(usage.data.some((r: { endpoint: string; model: string }) => r.endpoint === "/v1/responses" && r.model === model)).toBe(true);
      });
    });

    it.each(MODELS)("%s: streams the typed events, charged exactly", async (model) => {
      const before = await balanceMicros(h.server, h.user.userId);
      const stream = await h.client.responses.create({ model, input: [{ role: "user", content: [{ type: "input_text", text: "stream these words" }] }], max_output_tokens: 50, stream: true });
      const types: string[] = [];
      let text = "";
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "response.output_text.delta") text += event.delta;
        if (event.type === "response.completed") completed = event.response;
      }
      const reply = fakeChatReply([{ role: "user", content: "stream these words" }], 50);
      expect(text).toBe(reply.content);
      expect(types).toEqual([
        "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
        ...reply.pieces.map(() => "response.output_text.delta"),
        "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed",
      ]);
      expect(completed?.usage).toMatchObject({ input_tokens: reply.promptTokens, output_tokens: reply.completionTokens, total_tokens: reply.promptTokens + reply.completionTokens });
      expect(completed?.output[0]).toMatchObject({ type: "message", content: [{ type: "output_text", text: reply.content }] });
      // stored before response.completed was written: retrievable at once
      expect(await h.client.responses.retrieve(completed?.id ?? "")).toMatchObject({ status: "completed", output_text: reply.content });
      await vi.waitFor(async () => expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(textCost(reply.promptTokens, reply.completionTokens)));
    });

    it.each(MODELS)("%s: function calls, their outputs, and previous_response_id", async (model) => {
      const before = await balanceMicros(h.server, h.user.userId);
      const first = await h.client.responses.create({ model, input: "weather in Paris", tools, max_output_tokens: 50 });
      const call = fakeToolCall([{ role: "user", content: "weather in Paris" }], "get_weather");
      expect(first.output).toEqual([expect.objectContaining({ type: "function_call", call_id: call?.id, name: "get_weather", arguments: call?.arguments, status: "completed" })]);
      expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(textCost(call?.promptTokens ?? 0, call?.completionTokens ?? 0));
      const second = await h.client.responses.create({
        model, previous_response_id: first.id, tools, max_output_tokens: 50,
        input: [{ type: "function_call_output", call_id: call?.id ?? "", output: "sunny and warm" }],
      });
      expect(second.output_text).toBe("Echo: sunny and warm");
      expect(second.previous_response_id).toBe(first.id);
      // the stored conversation was sent upstream before the new input
      const sent = (model.startsWith("textA") ? h.fakes.textA : h.fakes.textB).lastRequest()?.json as { messages: unknown[] };
      expect(sent.messages).toHaveLength(3);
    });

    it.each(MODELS)("%s: streams a function call as arguments deltas", async (model) => {
      const stream = await h.client.responses.create({ model, input: "weather in Rome", tools, tool_choice: "required", stream: true, max_output_tokens: 50 });
      let args = "";
      let done: unknown;
      for await (const event of stream) {
        if (event.type === "response.function_call_arguments.delta") args += event.delta;
        if (event.type === "response.output_item.done") done = event.item;
      }
      const call = fakeToolCall([{ role: "user", content: "weather in Rome" }], "get_weather");
      expect(args).toBe(call?.arguments);
      expect(done).toMatchObject({ type: "function_call", call_id: call?.id, name: "get_weather", arguments: call?.arguments });
    });

    it("passes text.format and sampling to an OpenAI-protocol upstream as chat fields", async () => {
      await h.client.responses.create({
        model: "textA-4", input: "json please", temperature: 0.3, top_p: 0.9, max_output_tokens: 20,
        text: { format: { type: "json_schema", name: "answer", schema: { type: "object", properties: {} }, strict: true } },
      });
      expect(h.fakes.textA.lastRequest()?.json).toMatchObject({
        temperature: 0.3, top_p: 0.9, max_tokens: 20,
        response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object", properties: {} }, strict: true } },
      });
    });

    it("gets and deletes a stored response; another account's id is 404 not_found", async () => {
      const created = await h.client.responses.create({ model: "textA-4", input: "keep me", max_output_tokens: 20, metadata: { tag: "x" } });
      const got = await h.client.responses.retrieve(created.id);
      expect(got).toMatchObject({ id: created.id, output_text: "Echo: keep me", metadata: { tag: "x" } });
      const other = await fundedUser(h.server, 1);
      const otherClient = new OpenAI({ apiKey: other.key, baseURL: `${h.server.url}/v1`, maxRetries: 0 });
      const foreign = await otherClient.responses.retrieve(created.id).catch((e: unknown) => e);
      expect(foreign).toBeInstanceOf(OpenAI.NotFoundError);
      expect((foreign as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ code: "not_found", type: "not_found_error" });
      expect(await otherClient.responses.delete(created.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
      const continued = await otherClient.responses.create({ model: "textA-4", input: "hi", previous_response_id: created.id }).catch((e: unknown) => e);
      expect(continued).toBeInstanceOf(OpenAI.NotFoundError);
      await h.client.responses.delete(created.id);
      expect(await h.client.responses.retrieve(created.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    });

    it("sends input_image parts to an Anthropic-protocol upstream as image blocks", async () => {
      await h.client.responses.create({
        model: "textB-3-haiku", max_output_tokens: 20,
        input: [{ role: "user", content: [{ type: "input_text", text: "what is this?" }, { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "auto" }] }],
      });
      expect(h.fakes.textB.lastRequest()?.json).toMatchObject({
        messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }] }],
      });
    });

    it("store: false keeps nothing", async () => {
      const created = await h.client.responses.create({ model: "textA-4", input: "forget me", store: false, max_output_tokens: 20 });
      expect(created).toMatchObject({ store: false });
      expect(await h.client.responses.retrieve(created.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    });

    it("a stored response is kept 30 days", async () => {
      const created = await h.client.responses.create({ model: "textA-4", input: "remember", max_output_tokens: 20 });
      h.server.clock.advance(29 * 86_400_000);
      expect((await h.client.responses.retrieve(created.id)).id).toBe(created.id);
      h.server.clock.advance(86_400_000);
      expect(await h.client.responses.retrieve(created.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    });
  });

  describe("bad input: 400 in the nested form, nothing charged, no upstream call", () => {
    const refused = async (body: unknown, status: number, code: string) => {
      const before = await balanceMicros(h.server, h.user.userId);
      const res = await postJson(h.server, "/v1/responses", h.user.key, body);
      const json = await readJson(res);
      expect({ status: res.status, code: json.error?.code }).toEqual({ status, code });
      expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
      expect(h.fakes.textA.requests.length + h.fakes.textB.requests.length).toBe(0);
      return json.error.message as string;
    };

    it("an unknown item type", async () => {
      expect(await refused({ model: "textA-4", input: [{ type: "web_search_call", id: "x" }] }, 400, "invalid_parameter")).toContain("type");
    });

    it("an unknown content part type", async () => {
      await refused({ model: "textB-3-haiku", input: [{ role: "user", content: [{ type: "input_video", url: "x" }] }] }, 400, "invalid_parameter");
    });

    it.each(MODELS)("%s: a function call without its output", async (model) => {
      const message = await refused({
        model, tools, input: [{ role: "user", content: "hi" }, { type: "function_call", call_id: "call_9", name: "get_weather", arguments: "{}" }, { role: "user", content: "next" }],
      }, 400, "invalid_parameter");
      expect(message).toContain("call_9");
    });

    it("an output for no call", async () => {
      await refused({ model: "textA-4", input: [{ type: "function_call_output", call_id: "call_7", output: "x" }] }, 400, "invalid_parameter");
    });

    it("an unknown previous_response_id", async () => {
      await refused({ model: "textA-4", input: "hi", previous_response_id: "resp_unknown" }, 404, "not_found");
    });
  });

  describe("Vercel AI SDK, default openai(id) provider (Responses API)", () => {
    const provider = () => createOpenAI({ apiKey: h.user.key, baseURL: `${h.server.url}/v1` });

    it.each(MODELS)("%s: generateText", async (model) => {
      const before = await balanceMicros(h.server, h.user.userId);
      const result = await generateText({ model: provider()(model), prompt: "hello from vercel", maxOutputTokens: 50, maxRetries: 0 });
      const reply = fakeChatReply([{ role: "user", content: "hello from vercel" }], 50);
      expect(result.text).toBe(reply.content);
      expect(result.usage).toMatchObject({ inputTokens: reply.promptTokens, outputTokens: reply.completionTokens });
      expect(h.fakes.textA.requests.length + h.fakes.textB.requests.length).toBe(1);
      expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(textCost(reply.promptTokens, reply.completionTokens));
    });

    it.each(MODELS)("%s: streamText", async (model) => {
      const before = await balanceMicros(h.server, h.user.userId);
      const result = streamText({ model: provider()(model), prompt: "stream from vercel", maxOutputTokens: 50, maxRetries: 0 });
      let text = "";
      for await (const piece of result.textStream) text += piece;
      const reply = fakeChatReply([{ role: "user", content: "stream from vercel" }], 50);
      expect(text).toBe(reply.content);
      expect(await result.usage).toMatchObject({ inputTokens: reply.promptTokens, outputTokens: reply.completionTokens });
      await vi.waitFor(async () => expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(textCost(reply.promptTokens, reply.completionTokens)));
    });

    it.each(MODELS)("%s: generateText with a tool the SDK runs", async (model) => {
      const result = await generateText({
        model: provider()(model), prompt: "weather in Oslo", maxOutputTokens: 50, maxRetries: 0,
        tools: { get_weather: tool({ description: "weather", inputSchema: jsonSchema<{ query: string }>({ type: "object", properties: { query: { type: "string" } }, required: ["query"] }), execute: async ({ query }) => `cold in ${query}` }) },
        stopWhen: ({ steps }) => steps.length >= 2,
      });
      expect(result.steps[0]?.toolCalls[0]).toMatchObject({ toolName: "get_weather", input: { query: "weather in Oslo" } });
      expect(result.text).toBe("Echo: cold in weather in Oslo");
    });

    it.each(MODELS)("%s: streamText with a tool the SDK runs", async (model) => {
      const result = streamText({
        model: provider()(model), prompt: "weather in Lima", maxOutputTokens: 50, maxRetries: 0,
        tools: { get_weather: tool({ description: "weather", inputSchema: jsonSchema<{ query: string }>({ type: "object", properties: { query: { type: "string" } }, required: ["query"] }), execute: async ({ query }) => `warm in ${query}` }) },
        stopWhen: ({ steps }) => steps.length >= 2,
      });
      let text = "";
      for await (const piece of result.textStream) text += piece;
      expect((await result.steps)[0]?.toolCalls[0]).toMatchObject({ toolName: "get_weather", input: { query: "weather in Lima" } });
      expect(text).toBe("Echo: warm in weather in Lima");
    });
  });
});
