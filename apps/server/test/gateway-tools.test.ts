// Tool calling, logprobs and the rest of OpenAI's chat format through /v1/chat/completions with the official SDK:
// existing clients work by changing only the base URL (SPEC 1.3), on OpenAI- and Anthropic-protocol models alike.
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { DEFAULT_PLANS } from "@gw/config";
import { fakeChatReply, fakeToolCall } from "@gw/test-support";
import { balanceMicros, postJson, readJson } from "./support/gateway-fixtures";
import { useSdkHarness } from "./support/sdk-harness";

// SPEC 8 prices in micro-dollars: 1 per input token, 2 per output token.
const textCost = (prompt: number, completion: number) => prompt + 2 * completion;

const tools: ChatCompletionTool[] = [{
  type: "function",
  function: { name: "get_weather", description: "weather of a city", parameters: { type: "object", properties: { query: { type: "string" } } } },
}];

describe("tool calls through /v1/chat/completions (official openai SDK)", () => {
  // more requests than the free plan's 20 a minute
  const h = useSdkHarness({ plans: DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 1_000 })) });

  it.each(["textA-4", "textB-3-haiku"])("%s: returns the model's tool call and charges its usage", async (model) => {
    const before = await balanceMicros(h.server, h.user.userId);
    const { data, response } = await h.client.chat.completions.create({
      model, messages: [{ role: "user", content: "weather in Paris" }], tools, max_tokens: 50,
    }).withResponse();
    const call = fakeToolCall([{ role: "user", content: "weather in Paris" }], "get_weather");
    const choice = data.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toEqual([{ id: call?.id, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ query: "weather in Paris" }) } }]);
    const cost = textCost(call?.promptTokens ?? 0, call?.completionTokens ?? 0);
    expect(data.usage).toMatchObject({ prompt_tokens: call?.promptTokens, completion_tokens: call?.completionTokens });
    expect(response.headers.get("x-request-cost")).toBe((cost / 1e6).toFixed(6));
    expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(cost);
  });

  it.each(["textA-4", "textB-3-haiku"])("%s: takes the tool's answer back and finishes the turn", async (model) => {
    const messages: ChatCompletionMessageParam[] = [
      { role: "user", content: "weather in Paris" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"query\":\"Paris\"}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "sunny and warm" },
    ];
    const data = await h.client.chat.completions.create({ model, messages, tools, max_tokens: 50 });
    expect(data.choices[0]?.message.content).toBe("Echo: sunny and warm");
    expect(data.choices[0]?.finish_reason).toBe("stop");
  });

  it("sends the client's messages to an OpenAI-compatible upstream as they came (developer role, name, tool fields)", async () => {
    const messages = [
      { role: "developer", content: "answer briefly" },
      { role: "user", content: [{ type: "text", text: "what is in " }, { type: "image_url", image_url: { url: "https://example.com/cat.png" } }], name: "ann" },
    ] as ChatCompletionMessageParam[];
    await h.client.chat.completions.create({ model: "textA-4", messages, max_tokens: 20, tool_choice: "none", parallel_tool_calls: false });
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ messages, tool_choice: "none", parallel_tool_calls: false });
  });

  it.each(["textA-4", "textB-3-haiku"])("%s: streams tool-call deltas the SDK can assemble", async (model) => {
    const stream = await h.client.chat.completions.create({
      model, messages: [{ role: "user", content: "weather in Rome" }], tools, max_tokens: 50, stream: true, stream_options: { include_usage: true },
    });
    let args = "";
    let name = "";
    let finish: string | null | undefined;
    let usage: unknown;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      for (const delta of choice?.delta.tool_calls ?? []) {
        expect(delta.index).toBe(0);
        name += delta.function?.name ?? "";
        args += delta.function?.arguments ?? "";
      }
      finish = choice?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    const call = fakeToolCall([{ role: "user", content: "weather in Rome" }], "get_weather");
    expect({ name, args, finish }).toEqual({ name: "get_weather", args: call?.arguments, finish: "tool_calls" });
    expect(usage).toMatchObject({ prompt_tokens: call?.promptTokens, completion_tokens: call?.completionTokens });
  });

  it("textB: a streamed call of a tool without parameters has arguments '{}', as unstreamed, and the client can send it back", async () => {
    const noParams: ChatCompletionTool[] = [{ type: "function", function: { name: "now", description: "the current time" } }];
    const asked: ChatCompletionMessageParam[] = [{ role: "user", content: "what time is it" }];
    const answer = await h.client.chat.completions.create({ model: "textB-3-haiku", messages: asked, tools: noParams, max_tokens: 50 });
    expect(answer.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { name: "now", arguments: "{}" } });
    // the SDK's stream helper assembles the deltas and parses each call's arguments
    const runner = h.client.chat.completions.stream({ model: "textB-3-haiku", messages: asked, tools: noParams, max_tokens: 50 });
    const streamed = await runner.finalMessage();
    const call = streamed.tool_calls?.[0];
    expect(call?.type === "function" ? call.function : undefined).toEqual({ name: "now", arguments: "{}" });
    // what it assembled goes back in the next turn, with an empty string from older clients taken for "no arguments"
    const replayed = await h.client.chat.completions.create({
      model: "textB-3-haiku", tools: noParams, max_tokens: 50,
      messages: [
        ...asked,
        { role: "assistant", content: null, tool_calls: [{ id: "call_a", type: "function", function: { name: "now", arguments: "{}" } }, { id: "call_b", type: "function", function: { name: "now", arguments: "" } }] },
        { role: "tool", tool_call_id: "call_a", content: "noon" },
        { role: "tool", tool_call_id: "call_b", content: " again" },
      ],
    });
    // both answers in the one user turn Messages wants
    expect(replayed.choices[0]?.message.content).toBe("Echo: noon again");
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({
      messages: [{}, { role: "assistant", content: [{ type: "tool_use", id: "call_a", input: {} }, { type: "tool_use", id: "call_b", input: {} }] }, {
        role: "user", content: [{ type: "tool_result", tool_use_id: "call_a" }, { type: "tool_result", tool_use_id: "call_b" }],
      }],
    });
  });

  it("textB: parallel tool answers (one tool message each) and a following user message reach Messages as one user turn", async () => {
    // Messages wants every tool_use answered in the very next message, all tool_result blocks first (a second user
    // turn with the other result is refused: "tool_use ids were found without tool_result blocks immediately after").
    const messages: ChatCompletionMessageParam[] = [
      { role: "user", content: "weather in Paris and Rome" },
      { role: "assistant", content: null, tool_calls: [
        { id: "call_p", type: "function", function: { name: "get_weather", arguments: "{\"query\":\"Paris\"}" } },
        { id: "call_r", type: "function", function: { name: "get_weather", arguments: "{\"query\":\"Rome\"}" } },
      ] },
      { role: "tool", tool_call_id: "call_p", content: "sunny" },
      { role: "tool", tool_call_id: "call_r", content: "rainy" },
      { role: "user", content: "which is warmer" },
    ];
    const data = await h.client.chat.completions.create({ model: "textB-3-haiku", messages, tools, tool_choice: "none", max_tokens: 50 });
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({
      messages: [
        { role: "user", content: "weather in Paris and Rome" },
        { role: "assistant", content: [{ type: "tool_use", id: "call_p" }, { type: "tool_use", id: "call_r" }] },
        { role: "user", content: [
          { type: "tool_result", tool_use_id: "call_p", content: "sunny" },
          { type: "tool_result", tool_use_id: "call_r", content: "rainy" },
          { type: "text", text: "which is warmer" },
        ] },
      ],
    });
    expect((h.fakes.textB.lastRequest()?.json as { messages: unknown[] }).messages).toHaveLength(3);
  });

  it("textB: consecutive user messages (a system message between them left out) are sent as one user turn", async () => {
    await h.client.chat.completions.create({
      model: "textB-3-haiku", max_tokens: 20,
      messages: [{ role: "user", content: "first" }, { role: "system", content: "be brief" }, { role: "user", content: [{ type: "text", text: "second" }] }],
    });
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({
      system: "be brief",
      messages: [{ role: "user", content: [{ type: "text", text: "first" }, { type: "text", text: "second" }] }],
    });
    expect((h.fakes.textB.lastRequest()?.json as { messages: unknown[] }).messages).toHaveLength(1);
  });

  it("textB: parallel_tool_calls false with tool_choice none sends Messages' none choice, which takes no other field", async () => {
    const data = await h.client.chat.completions.create({
      model: "textB-3-haiku", messages: [{ role: "user", content: "just talk" }], tools, tool_choice: "none", parallel_tool_calls: false, max_tokens: 20,
    });
    expect(data.choices[0]?.message.content).toBe("Echo: just talk");
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({ tool_choice: { type: "none" } });
    expect((h.fakes.textB.lastRequest()?.json as { tool_choice: object }).tool_choice).toEqual({ type: "none" });
  });

  describe("textB: a history of tool calls in a request that defines no tools (Messages refuses tool_use and tool_result blocks there)", () => {
    const history = [
      { role: "user", content: "weather in Paris" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"query\":\"Paris\"}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "sunny and warm" },
    ];
    // what reaches Messages: the call and its answer as text blocks
    const sentHistory = [
      { role: "user", content: "weather in Paris" },
      { role: "assistant", content: [{ type: "text", text: "[tool call call_1] get_weather({\"query\":\"Paris\"})" }] },
      { role: "user", content: [{ type: "text", text: "[tool result call_1]\n" }, { type: "text", text: "sunny and warm" }] },
    ];

    it("/v1/chat/completions: a last turn asking for a plain answer is answered 200 and charged the upstream's usage", async () => {
      const before = await balanceMicros(h.server, h.user.userId);
      const res = await postJson(h.server, "/v1/chat/completions", h.user.key, {
        model: "textB-3-haiku", max_tokens: 50, messages: [...history, { role: "user", content: "so, umbrella or not?" }],
      });
      expect(res.status).toBe(200);
      const sent = [...sentHistory.slice(0, 2), { role: "user", content: [...(sentHistory[2]?.content as object[]), { type: "text", text: "so, umbrella or not?" }] }];
      expect(h.fakes.textB.lastRequest()?.json).toEqual({ model: "textB-3-haiku", max_tokens: 50, messages: sent });
      const reply = fakeChatReply(sent, 50);
      const body = await readJson(res);
      expect(body.choices[0]).toMatchObject({ message: { role: "assistant", content: reply.content }, finish_reason: "stop" });
      expect(body.usage).toMatchObject({ prompt_tokens: reply.promptTokens, completion_tokens: reply.completionTokens });
      const cost = textCost(reply.promptTokens, reply.completionTokens);
      expect(res.headers.get("x-request-cost")).toBe((cost / 1e6).toFixed(6));
      expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(cost);
    });

    it("/api/v1/task (which offers no tools): the tool's answer as the last turn is answered 200 and charged the upstream's usage", async () => {
      const before = await balanceMicros(h.server, h.user.userId);
      const res = await postJson(h.server, "/api/v1/task", h.user.key, { model: "textB-3-haiku", max_tokens: 50, messages: history });
      expect(res.status).toBe(200);
      expect(h.fakes.textB.lastRequest()?.json).toEqual({ model: "textB-3-haiku", max_tokens: 50, messages: sentHistory });
      const reply = fakeChatReply(sentHistory, 50);
      const body = await readJson(res);
      expect(body).toMatchObject({
        object: "task.completion", choices: [{ message: { role: "assistant", content: reply.content }, finish_reason: "stop" }],
        usage: { prompt_tokens: reply.promptTokens, completion_tokens: reply.completionTokens },
      });
      expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(textCost(reply.promptTokens, reply.completionTokens));
    });
  });

  it("textB: a final assistant message (prefill) ending in whitespace, which OpenAI accepts, reaches Messages trimmed and is answered 200, streamed or not", async () => {
    const messages: Array<{ role: "user" | "assistant"; content: string }> = [
      { role: "user", content: "Say hi " },
      { role: "assistant", content: "Hi " },
      { role: "user", content: "again please" },
      { role: "assistant", content: "Sure, " },
    ];
    const sent = [...messages.slice(0, 3), { role: "assistant", content: "Sure," }];
    const reply = fakeChatReply(sent, 50);
    const before = await balanceMicros(h.server, h.user.userId);
    const data = await h.client.chat.completions.create({ model: "textB-3-haiku", messages, max_tokens: 50 });
    expect(data.choices[0]?.message.content).toBe(reply.content);
    expect(h.fakes.textB.lastRequest()?.json).toEqual({ model: "textB-3-haiku", max_tokens: 50, messages: sent });
    expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(textCost(reply.promptTokens, reply.completionTokens));
    const stream = await h.client.chat.completions.create({ model: "textB-3-haiku", messages, max_tokens: 50, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(reply.content);
    expect(h.fakes.textB.lastRequest()?.json).toEqual({ model: "textB-3-haiku", max_tokens: 50, messages: sent, stream: true });
  });

  it("sends an Anthropic-protocol model the content parts as blocks in the client's order (text between images stays between them)", async () => {
    const content = [
      { type: "text", text: "Image 1:" },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      { type: "text", text: "Image 2:" },
      { type: "image_url", image_url: { url: "https://example.com/dog.png" } },
      { type: "text", text: "How do they differ?" },
    ];
    const res = await postJson(h.server, "/v1/chat/completions", h.user.key, { model: "textB-3-haiku", messages: [{ role: "user", content }], max_tokens: 20 });
    expect(res.status).toBe(200);
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "Image 1:" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          { type: "text", text: "Image 2:" },
          { type: "image", source: { type: "url", url: "https://example.com/dog.png" } },
          { type: "text", text: "How do they differ?" },
        ],
      }],
    });
  });

  it("textB: the text parts of system and tool messages reach Messages as text blocks, not run together", async () => {
    const messages = [
      { role: "system", content: [{ type: "text", text: "be brief" }, { type: "text", text: "and kind" }] },
      { role: "user", content: "weather in Paris" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "line one" }, { type: "text", text: "line two" }] },
    ] as ChatCompletionMessageParam[];
    const data = await h.client.chat.completions.create({ model: "textB-3-haiku", messages, tools, max_tokens: 50 });
    expect(data.choices[0]?.finish_reason).toBe("stop");
    const sent = h.fakes.textB.lastRequest()?.json as { system: unknown; messages: Array<{ content: unknown }> };
    expect(sent.system).toEqual([{ type: "text", text: "be brief" }, { type: "text", text: "and kind" }]);
    expect(sent.messages[2]?.content).toEqual([{
      type: "tool_result", tool_use_id: "call_1", content: [{ type: "text", text: "line one" }, { type: "text", text: "line two" }],
    }]);
  });

  it("textB: an inline image declared image/jpg (which OpenAI accepts) reaches Messages as image/jpeg, the only JPEG type it knows", async () => {
    const messages = [{ role: "user", content: [{ type: "text", text: "what is this" }, { type: "image_url", image_url: { url: "data:image/jpg;base64,/9j/4AAQ" } }] }] as ChatCompletionMessageParam[];
    await h.client.chat.completions.create({ model: "textB-3-haiku", messages, max_tokens: 20 });
    const sent = h.fakes.textB.lastRequest()?.json as { messages: Array<{ content: unknown }> };
    expect(sent.messages[0]?.content).toEqual([
      { type: "text", text: "what is this" },
      { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/4AAQ" } },
    ]);
  });

  it("sends the task endpoint's content parts to an OpenAI-compatible upstream in the client's order", async () => {
    const content = [
      { type: "text", text: "Image 1:" },
      { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
      { type: "text", text: "Image 2:" },
      { type: "image_url", image_url: { url: "https://example.com/dog.png" } },
    ];
    const res = await postJson(h.server, "/api/v1/task", h.user.key, { model: "textA-4", messages: [{ role: "user", content }], max_tokens: 20 });
    expect(res.status).toBe(200);
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ messages: [{ role: "user", content }] });
  });

  it("returns logprobs and system_fingerprint from an OpenAI-compatible upstream", async () => {
    const data = await h.client.chat.completions.create({ model: "textA-4", messages: [{ role: "user", content: "one two" }], logprobs: true, max_tokens: 10 });
    expect(data.choices[0]?.logprobs?.content?.map((l) => l.token)).toEqual(["Echo:", " one", " two"]);
    expect(data.system_fingerprint).toBe("fp_fake");
  });

  it("rejects a tool message without tool_call_id and a null content outside assistant turns, at no cost", async () => {
    const before = await balanceMicros(h.server, h.user.userId);
    const noId = await postJson(h.server, "/v1/chat/completions", h.user.key, {
      model: "textA-4", messages: [{ role: "user", content: "hi" }, { role: "tool", content: "42" }],
    });
    expect(noId.status).toBe(400);
    expect(await readJson(noId)).toEqual({ error: { message: "Missing required parameter: 'messages[1].tool_call_id'.", type: "invalid_request_error", code: "missing_required_parameter" } });
    const nullContent = await postJson(h.server, "/v1/chat/completions", h.user.key, { model: "textA-4", messages: [{ role: "user", content: null }] });
    expect(nullContent.status).toBe(400);
    expect(await readJson(nullContent)).toEqual({ error: { message: "Invalid parameter 'messages[0].content': must be a string or an array.", type: "invalid_request_error", code: "invalid_parameter" } });
    const badCall = await postJson(h.server, "/v1/chat/completions", h.user.key, {
      model: "textA-4", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f" } }] }],
    });
    expect(badCall.status).toBe(400);
    expect((await readJson(badCall)).error.message).toBe("Missing required parameter: 'messages[0].tool_calls[0].function.arguments'.");
    expect(h.fakes.textA.requests).toHaveLength(0);
    expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
  });

  it("textB: tool-call arguments that are JSON but not an object (Messages' tool_use input is one) are 400, never sent upstream, free", async () => {
    const before = await balanceMicros(h.server, h.user.userId);
    for (const args of ["[1]", "null", "5", "\"Paris\""]) {
      const res = await postJson(h.server, "/v1/chat/completions", h.user.key, {
        model: "textB-3-haiku", tools, max_tokens: 20, messages: [
          { role: "user", content: "weather in Paris" },
          { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: args } }] },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
        ],
      });
      expect(res.status).toBe(400);
      expect(await readJson(res)).toEqual({ error: { message: "Invalid parameter 'messages': tool_calls[].function.arguments must be a JSON object.", type: "invalid_request_error", code: "invalid_parameter" } });
    }
    expect(h.fakes.textB.requests).toHaveLength(0);
    expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
  });
});
