import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { fakeEmbedding } from "@gw/test-support";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";
import { useSdkHarness } from "./support/sdk-harness";

// SPEC 8 prices in micro-dollars: 1 per input token, 2 per output token.
const textCost = (prompt: number, completion: number) => prompt + 2 * completion;
/** The texts of a legacy completions stream, joined. */
const deltaTexts = (sse: string): string => sse.split("\n\n").filter((e) => e.startsWith("data: {"))
  .map((e) => (JSON.parse(e.slice(6)) as { choices?: Array<{ text: string }> }).choices?.[0]?.text ?? "").join("");

describe("chat-compatible /v1 endpoints through the official openai SDK", () => {
  const h = useSdkHarness();

  it("answers a chat completion and charges exactly the upstream usage", async () => {
    const before = await balanceMicros(h.server, h.user.userId);
    const { data, response } = await h.client.chat.completions.create({
      model: "textA-4", messages: [{ role: "user", content: "hello brave new world" }], max_tokens: 50,
    }).withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.id).toMatch(/^chatcmpl-[0-9A-Za-z]{24}$/);
    expect(data.model).toBe("textA-4");
    // the upstream's message as it came (refusal: null included)
    expect(data.choices[0]?.message).toEqual({ role: "assistant", content: "Echo: hello brave new world", refusal: null });
    expect(data.system_fingerprint).toBe("fp_fake");
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(data.usage).toEqual({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 });
    const cost = textCost(4, 5);
    expect(response.headers.get("x-request-cost")).toBe((cost / 1e6).toFixed(6));
    expect(response.headers.get("x-ratelimit-limit")).toBe("20");
    expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(cost);
  });

  it("retrieves one model (models.retrieve); an unknown one is 404 with the rate-limit headers", async () => {
    const model = await h.client.models.retrieve("textA-4");
    expect(model).toMatchObject({ id: "textA-4", object: "model", type: "text" });
    const missing = await fetch(`${h.server.url}/v1/models/no-such-model`, { headers: { authorization: `Bearer ${h.user.key}` } });
    expect(missing.status).toBe(404);
    expect(await readJson(missing)).toEqual({ error: { message: "The model 'no-such-model' does not exist.", type: "not_found_error", code: "not_found" } });
    expect(missing.headers.get("x-ratelimit-limit")).toBe("20");
  });

  it("quotes a long unknown model id shortened in its 404, as the other endpoints quote an unknown model", async () => {
    const caller = await fundedUser(h.server, 0);
    const res = await fetch(`${h.server.url}/v1/models/${"m".repeat(5000)}`, { headers: { authorization: `Bearer ${caller.key}` } });
    expect(res.status).toBe(404);
    expect(((await readJson(res)) as { error: { message: string } }).error.message).toBe(`The model '${"m".repeat(100)}' does not exist.`);
  });

  it("answers a model id that is not valid percent-encoding with 400, not 500", async () => {
    // its own key: these count against the minute's limit, and the suite's user spends its 20 elsewhere
    const caller = await fundedUser(h.server, 0);
    for (const path of ["/v1/models/%E0%A4%A", "/api/v1/models/text%A"]) {
      const res = await fetch(`${h.server.url}${path}`, { headers: { authorization: `Bearer ${caller.key}` } });
      expect(res.status).toBe(400);
      expect(await readJson(res)).toEqual({ error: { message: "Invalid parameter 'path': malformed percent-encoding.", type: "invalid_request_error", code: "invalid_parameter" } });
    }
  });

  it("answers an unknown path under /v1 and /api/v1 with 404 and, the key being known, the X-RateLimit-* headers", async () => {
    for (const [method, path] of [["POST", "/api/v1/nothing"], ["GET", "/v1/chat/nothing"], ["DELETE", "/v1/files/x"]] as const) {
      const res = await fetch(`${h.server.url}${path}`, { method, headers: { authorization: `Bearer ${h.user.key}` } });
      expect(res.status).toBe(404);
      expect(await readJson(res)).toEqual({ error: { message: `No route for ${method} ${path}.`, type: "not_found_error", code: "not_found" } });
      expect(res.headers.get("x-ratelimit-limit")).toBe("20");
      expect(res.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
    }
  });

  it("answers another method on a gateway route with 405 and Allow (issue 38), the X-RateLimit-* headers too", async () => {
    // a user of its own: the shared one's requests per minute are counted by the other tests
    const user = await fundedUser(h.server, 0);
    const res = await fetch(`${h.server.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(await readJson(res)).toEqual({ error: { message: "GET is not allowed on /v1/chat/completions; allowed: POST.", type: "invalid_request_error", code: "method_not_allowed" } });
    expect(res.headers.get("x-ratelimit-limit")).toBe("20");
  });

  it("routes textB models to the Anthropic protocol", async () => {
    const data = await h.client.chat.completions.create({
      model: "textB-3-haiku", messages: [{ role: "system", content: "be brief" }, { role: "user", content: "one two" }], max_tokens: 10,
    });
    // OpenAI's message shape: refusal is null, not absent (`message.refusal !== null` reads as a refusal otherwise)
    expect(data.choices[0]?.message).toEqual({ role: "assistant", content: "Echo: one two", refusal: null });
    expect(h.fakes.textB.lastRequest()?.path).toBe("/v1/messages");
  });

  it("textB: an answer cut short by the model's context window (model_context_window_exceeded) finishes with 'length', streamed or not", async () => {
    h.fakes.textB.stopReason = "model_context_window_exceeded";
    const user = await fundedUser(h.server, 1);
    const client = new OpenAI({ apiKey: user.key, baseURL: `${h.server.url}/v1`, maxRetries: 0 });
    const data = await client.chat.completions.create({ model: "textB-3-haiku", messages: [{ role: "user", content: "one two" }], max_tokens: 10 });
    expect(data.choices[0]?.finish_reason).toBe("length");
    const stream = await client.chat.completions.create({ model: "textB-3-haiku", messages: [{ role: "user", content: "one two" }], max_tokens: 10, stream: true });
    const reasons = [];
    for await (const chunk of stream) reasons.push(chunk.choices[0]?.finish_reason);
    expect(reasons.at(-1)).toBe("length");
  });

  it("passes unknown OpenAI fields through to the upstream", async () => {
    await h.client.chat.completions.create({
      model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 5, top_p: 0.5, user: "u-1",
    });
    const sent = h.fakes.textA.lastRequest()?.json as Record<string, unknown>;
    expect(sent.top_p).toBe(0.5);
    expect(sent.user).toBe("u-1");
  });

  it("streams chunks with role first, finish_reason last, a usage chunk and [DONE]", async () => {
    const before = await balanceMicros(h.server, h.user.userId);
    const stream = await h.client.chat.completions.create({
      model: "textA-4", messages: [{ role: "user", content: "alpha beta gamma" }], max_tokens: 50, stream: true, stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    // one id for the whole stream, spelled like OpenAI's
    expect(chunks[0]?.id).toMatch(/^chatcmpl-[0-9A-Za-z]{24}$/);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    const withChoices = chunks.filter((c) => c.choices.length > 0);
    expect(withChoices.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    expect(withChoices.slice(0, -1).every((c) => c.choices[0]?.finish_reason === null)).toBe(true);
    const text = withChoices.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("Echo: alpha beta gamma");
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, cost: textCost(3, 4) / 1e6 });
    expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(textCost(3, 4));
  });

  it("passes the upstream's usage breakdowns (cached and reasoning tokens) on, streamed or not, and charges the totals", async () => {
    const details = {
      prompt_tokens_details: { cached_tokens: 2, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 1, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    };
    h.fakes.textA.usageDetails = details;
    // an account of its own: the suite's shares one minute of the free plan's requests
    const user = await fundedUser(h.server, 1);
    const client = new OpenAI({ apiKey: user.key, baseURL: `${h.server.url}/v1`, maxRetries: 0 });
    const before = await balanceMicros(h.server, user.userId);
    const data = await client.chat.completions.create({ model: "textA-4", messages: [{ role: "user", content: "hello brave new world" }], max_tokens: 50 });
    expect(data.usage).toEqual({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9, ...details });
    const stream = await client.chat.completions.create({
      model: "textA-4", messages: [{ role: "user", content: "alpha beta gamma" }], max_tokens: 50, stream: true, stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1)?.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, ...details, cost: textCost(3, 4) / 1e6 });
    expect(before - (await balanceMicros(h.server, user.userId))).toBe(textCost(4, 5) + textCost(3, 4));
  });

  it("writes data: [DONE] as the last server-sent event", async () => {
    const res = await postJson(h.server, "/v1/chat/completions", h.user.key, { model: "textA-4", messages: [{ role: "user", content: "x" }], stream: true, max_tokens: 5 });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = (await res.text()).trim().split("\n\n");
    expect(events.at(-1)).toBe("data: [DONE]");
    // without include_usage there is no usage chunk
    expect(events.some((e) => e.includes('"choices":[]'))).toBe(false);
  });

  it("answers /v1/completions with the deprecation header", async () => {
    const res = await postJson(h.server, "/v1/completions", h.user.key, { model: "text-davinci-003", prompt: "say this", max_tokens: 10 });
    expect(res.status).toBe(200);
    expect(res.headers.get("deprecation")).toBe("true");
    const body = await readJson(res);
    expect(body).toMatchObject({ object: "text_completion", model: "text-davinci-003", choices: [{ text: "Echo: say this", index: 0, logprobs: null, finish_reason: "stop" }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } });
    const sdk = await h.client.completions.create({ model: "text-davinci-003", prompt: "a b", max_tokens: 5 });
    expect(sdk.choices[0]?.text).toBe("Echo: a b");
    expect(sdk.id).toMatch(/^cmpl-[0-9A-Za-z]{24}$/);
  });

  it("holds a completion's suffix as prompt, as OpenAI bills it: a balance that covers the prompt alone is refused, streamed or not", async () => {
    // $0.001 covers "x" and 5 output tokens, not the 2,000 tokens of the suffix the upstream would read and bill
    const caller = await fundedUser(h.server, 0.001);
    const suffix = " and".repeat(2_000);
    for (const stream of [false, true]) {
      const res = await postJson(h.server, "/v1/completions", caller.key, { model: "text-davinci-003", prompt: "x", suffix, max_tokens: 5, stream });
      expect(res.status).toBe(402);
      expect((await readJson(res)).error).toMatchObject({ code: "insufficient_credits", current_balance: 0.001 });
    }
    expect(h.fakes.textA.requests).toHaveLength(0);
    expect(await balanceMicros(h.server, caller.userId)).toBe(1_000);
  });

  it("counts a completion's suffix as prompt when the upstream reports no usage, streamed or not", async () => {
    // its own key: the suite's user spends its 20 requests a minute elsewhere
    const caller = await fundedUser(h.server, 1);
    h.fakes.textA.reportUsage = false;
    const suffix = " and".repeat(20);
    for (const stream of [false, true]) {
      const res = await postJson(h.server, "/v1/completions", caller.key, { model: "text-davinci-003", prompt: "x", suffix, max_tokens: 5, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
      expect(res.status).toBe(200);
      const usage = stream ? JSON.parse((await res.text()).trim().split("\n\n").at(-2)?.slice(6) ?? "{}").usage : (await readJson(res)).usage;
      expect(usage.prompt_tokens).toBeGreaterThanOrEqual(20);
    }
  });

  it("charges the prompt an echo repeats as prompt, not output, when the upstream reports no usage, streamed or not", async () => {
    const caller = await fundedUser(h.server, 1);
    h.fakes.textA.reportUsage = false;
    const prompt = "one two three four five six seven eight";
    for (const stream of [false, true]) {
      const before = await balanceMicros(h.server, caller.userId);
      const res = await postJson(h.server, "/v1/completions", caller.key, { model: "text-davinci-003", prompt, echo: true, max_tokens: 20, stream });
      const text = stream ? deltaTexts(await res.text()) : (await readJson(res)).choices[0].text;
      expect(text).toBe(`${prompt}Echo: ${prompt}`);
      // 8 prompt tokens; the output, "Echo: " and the 8 words, is 10
      expect(before - (await balanceMicros(h.server, caller.userId))).toBe(textCost(8, 10));
    }
    // a stream cut after output began pays the text sent after the echoed prompt
    h.fakes.textA.failNext(1, { kind: "truncate", at: "half" });
    const before = await balanceMicros(h.server, caller.userId);
    const res = await postJson(h.server, "/v1/completions", caller.key, { model: "text-davinci-003", prompt, echo: true, max_tokens: 20, stream: true });
    const sent = deltaTexts(await res.text());
    expect(sent.startsWith(`${prompt}Echo:`)).toBe(true);
    // "Echo:" is two tokens, each word after it one
    const output = sent.slice(prompt.length).replace("Echo:", "Echo :").split(/\s+/).filter(Boolean).length;
    expect(before - (await balanceMicros(h.server, caller.userId))).toBe(textCost(8, output));
  });

  it("marks every answer of /v1/completions deprecated, refusals before the handler included", async () => {
    const caller = await fundedUser(h.server, 0);
    const refusals = [
      await fetch(`${h.server.url}/v1/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
      await fetch(`${h.server.url}/v1/completions`, { method: "POST", headers: { authorization: `Bearer ${caller.key}`, "content-type": "application/json" }, body: "{" }),
    ];
    expect(refusals.map((r) => [r.status, r.headers.get("deprecation")])).toEqual([[401, "true"], [400, "true"]]);
  });

  it("returns embeddings for string and array input, base64 (SDK default) and float", async () => {
    const sdk = await h.client.embeddings.create({ model: "text-embedding-ada-002", input: ["one", "two"] });
    expect(sdk.data.map((d) => d.index)).toEqual([0, 1]);
    expect(sdk.data[0]?.embedding).toEqual(fakeEmbedding("one"));
    const res = await postJson(h.server, "/v1/embeddings", h.user.key, { model: "text-embedding-ada-002", input: "three", encoding_format: "float" });
    const body = await readJson(res);
    expect(body).toMatchObject({ object: "list", model: "text-embedding-ada-002", data: [{ object: "embedding", index: 0, embedding: fakeEmbedding("three") }] });
    expect(body.usage.prompt_tokens).toBe(body.usage.total_tokens);
  });

  it("embeds token ids and token arrays (SDK) and charges their count", async () => {
    const before = await balanceMicros(h.server, h.user.userId);
    const single = await h.client.embeddings.create({ model: "text-embedding-ada-002", input: [15339, 1917] });
    expect(single.data.map((d) => d.embedding)).toEqual([fakeEmbedding([15339, 1917])]);
    const many = await h.client.embeddings.create({ model: "text-embedding-ada-002", input: [[1, 2, 3], [4]] });
    expect(many.data.map((d) => d.embedding)).toEqual([fakeEmbedding([1, 2, 3]), fakeEmbedding([4])]);
    expect(many.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(textCost(2 + 4, 0));
  });

  it("lists every model with type, context window and pricing", async () => {
    const page = await h.client.models.list();
    const ids = page.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(["textA-4", "textB-3-opus", "imageB-1-dev", "speechvendor-tts", "text-embedding-ada-002"]));
    const res = await fetch(`${h.server.url}/api/v1/models`, { headers: { authorization: `Bearer ${h.user.key}` } });
    const body = await readJson(res);
    expect(body.object).toBe("list");
    expect(body.data.find((m: { id: string }) => m.id === "textA-4")).toMatchObject({ object: "model", type: "text", context_window: 8192, pricing: { input_per_1k_tokens: 0.001, output_per_1k_tokens: 0.002 } });
  });

  it("maps SDK errors: bad key 401, bad temperature 400, unknown model 400", async () => {
    const bad = new OpenAI({ apiKey: "ak-live-nope", baseURL: `${h.server.url}/v1`, maxRetries: 0 });
    await expect(bad.models.list()).rejects.toMatchObject({ status: 401, code: "invalid_api_key" });
    await expect(h.client.chat.completions.create({ model: "textA-4", messages: [{ role: "user", content: "x" }], temperature: 3 }))
      .rejects.toMatchObject({ status: 400, code: "invalid_parameter" });
    await expect(h.client.chat.completions.create({ model: "nope-1", messages: [{ role: "user", content: "x" }] }))
      .rejects.toMatchObject({ status: 400, code: "unsupported_model" });
  });
});
