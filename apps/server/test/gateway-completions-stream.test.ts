import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_PLANS } from "@gw/config";
import { countTokens } from "@gw/providers";
import { fakeChatReply, fakeCompletion, startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";

// SPEC 8 prices in micro-dollars: 1 per input token, 2 per output token.
const textCost = (prompt: number, completion: number) => prompt + 2 * completion;
const FUNDS = 1_000_000;

/** The data events of an SSE body, [DONE] included. */
const dataEvents = (sse: string): string[] => sse.split("\n\n").filter((e) => e.startsWith("data: ")).map((e) => e.slice(6));

/** The text a legacy completions stream's chunks carried. */
const streamedText = (sse: string): string => dataEvents(sse).filter((e) => e.startsWith("{") && e.includes('"text"'))
  .map((e) => (JSON.parse(e) as { choices: Array<{ text: string }> }).choices[0]?.text ?? "").join("");

describe("POST /v1/completions with stream: true (OpenAI's legacy completions stream)", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 100_000, concurrentRequests: 1_000 } : p));
    server = await startTestServer({ env: { ...fakes.env, UPSTREAM_MAX_RETRIES: "1" }, config: { plans } });
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });
  beforeEach(() => fakes.clearAll());

  const sdkFor = (key: string) => new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 });
  const prompt = "one two three four";

  it.each([
    ["text-davinci-003", "textA", "/v1/completions", fakeCompletion(prompt, 20)],
    ["textB-2", "textB", "/v1/messages", fakeChatReply([{ role: "user", content: prompt }], 20)],
    // textC's upstream speaks chat completions only (CONTRACT 4): the prompt goes as one user message
    ["textC-8x7b", "textC", "/v1/chat/completions", fakeChatReply([{ role: "user", content: prompt }], 20)],
  ] as const)("%s (%s upstream, %s) through the SDK: the upstream's text, finish_reason, a usage chunk with the cost, charged exactly that", async (model, upstream, path, reply) => {
    const user = await fundedUser(server, 1);
    const { data: stream, response } = await sdkFor(user.key).completions.create({
      model, prompt, max_tokens: 20, stream: true, stream_options: { include_usage: true },
    }).withResponse();
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("deprecation")).toBe("true");
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.object === "text_completion" && c.model === model)).toBe(true);
    expect(chunks[0]?.id).toMatch(/^cmpl-[0-9A-Za-z]{24}$/);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const withChoices = chunks.slice(0, -1);
    expect(withChoices.every((c) => c.choices.length === 1 && c.usage === null)).toBe(true);
    expect(withChoices.map((c) => c.choices[0]?.text).join("")).toBe(reply.content);
    expect(withChoices.map((c) => c.choices[0]?.finish_reason)).toEqual([...withChoices.slice(1).map(() => null), "stop"]);
    const cost = textCost(reply.promptTokens, reply.completionTokens);
    expect(chunks.at(-1)).toMatchObject({ choices: [] });
    expect(chunks.at(-1)?.usage).toEqual({
      prompt_tokens: reply.promptTokens, completion_tokens: reply.completionTokens, total_tokens: reply.promptTokens + reply.completionTokens, cost: cost / 1e6,
    });
    expect(FUNDS - (await balanceMicros(server, user.userId))).toBe(cost);
    const sent = fakes[upstream].lastRequest();
    expect(sent?.path).toBe(path);
    expect(sent?.json).toMatchObject({ stream: true });
    // textA's upstream only: textC's own answered
    if (upstream === "textC") expect(fakes.textA.requests).toHaveLength(0);
  });

  it("writes exactly OpenAI's chunks: text events, the finish on one of empty text, usage: null on each, the usage chunk, [DONE]", async () => {
    const user = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/completions", user.key, { model: "text-davinci-003", prompt: "a b", max_tokens: 5, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const events = dataEvents(await res.text());
    const { id, created } = JSON.parse(events[0] ?? "{}") as { id: string; created: number };
    const head = `"id":"${id}","object":"text_completion","created":${created},"model":"text-davinci-003"`;
    const choice = (text: string, finish: string | null) => `{${head},"choices":[{"text":${JSON.stringify(text)},"index":0,"logprobs":null,"finish_reason":${JSON.stringify(finish)}}],"usage":null}`;
    expect(events).toEqual([
      choice("Echo:", null), choice(" a", null), choice(" b", null), choice("", "stop"),
      `{${head},"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5,"cost":${textCost(2, 3) / 1e6}}}`,
      "[DONE]",
    ]);
    // without include_usage: no usage field and no usage chunk
    const plain = dataEvents(await (await postJson(server, "/v1/completions", user.key, { model: "text-davinci-003", prompt: "a b", max_tokens: 5, stream: true })).text());
    expect(plain).toHaveLength(5);
    expect(plain.at(-1)).toBe("[DONE]");
    expect(plain.some((e) => e.includes("usage"))).toBe(false);
    expect(FUNDS - (await balanceMicros(server, user.userId))).toBe(2 * textCost(2, 3));
  });

  it.each([
    ["text-davinci-003", "textA", () => countTokens("one two three four five six seven eight")],
    // Messages reports the prompt first (message_start): that figure is charged
    ["textB-2", "textB", () => fakeChatReply([{ role: "user", content: "one two three four five six seven eight" }]).promptTokens],
  ] as const)("%s: a stream the upstream cuts after output began ends with an error event and is charged only for what was produced", async (model, upstream, promptTokens) => {
    const user = await fundedUser(server, 1);
    fakes[upstream].failNext(1, { kind: "truncate" });
    const res = await postJson(server, "/v1/completions", user.key, { model, prompt: "one two three four five six seven eight", max_tokens: 100, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get("deprecation")).toBe("true");
    const text = await res.text();
    const events = dataEvents(text);
    expect(JSON.parse(events.at(-1) ?? "{}")).toEqual({ error: { message: "The upstream stream broke off before it finished.", type: "api_error", code: "upstream_error" } });
    expect(text).not.toContain("[DONE]");
    const produced = streamedText(text);
    expect(produced.length).toBeGreaterThan(0);
    expect(FUNDS - (await balanceMicros(server, user.userId))).toBe(textCost(promptTokens(), countTokens(produced)));
    const usage = await fetch(`${server.url}/api/usage`, { headers: { authorization: `Bearer ${user.key}` } });
    expect((await readJson(usage)).data).toEqual([expect.objectContaining({
      endpoint: "/v1/completions", model, type: "text", status: "partial",
      prompt_tokens: promptTokens(), completion_tokens: countTokens(produced), output_bytes: Buffer.byteLength(produced),
    })]);
  });

  it("an upstream error before any output is a JSON error (with the Deprecation header) and costs nothing", async () => {
    const user = await fundedUser(server, 1);
    fakes.textA.failStatus(2, 500);
    const res = await postJson(server, "/v1/completions", user.key, { model: "text-davinci-003", prompt: "hello", stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("deprecation")).toBe("true");
    expect(await readJson(res)).toEqual({ error: { message: "The upstream provider failed (HTTP 500): forced status 500.", type: "api_error", code: "upstream_error" } });
    expect(fakes.textA.requests).toHaveLength(2);
    // the SDK sees the same as an APIError
    fakes.textA.failStatus(2, 500);
    await expect(sdkFor(user.key).completions.create({ model: "text-davinci-003", prompt: "hello", stream: true })).rejects.toMatchObject({ status: 502, code: "upstream_error" });
    expect(await balanceMicros(server, user.userId)).toBe(FUNDS);
  });

  it("refuses what cannot stream: best_of above 1 and n above 1 are 400 naming them, at no cost; best_of 1 streams", async () => {
    const user = await fundedUser(server, 1);
    const body = { model: "text-davinci-003", prompt: "hello", max_tokens: 5, stream: true };
    const bestOf = await postJson(server, "/v1/completions", user.key, { ...body, best_of: 2 });
    expect(bestOf.status).toBe(400);
    expect(bestOf.headers.get("deprecation")).toBe("true");
    expect(await readJson(bestOf)).toEqual({ error: {
      message: "Invalid parameter 'best_of': must be 1 when 'stream' is enabled (the best of several completions cannot be streamed).",
      type: "invalid_request_error", code: "invalid_parameter",
    } });
    const n = await postJson(server, "/v1/completions", user.key, { ...body, n: 2 });
    expect(n.status).toBe(400);
    expect((await readJson(n)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'n'") });
    expect(fakes.textA.requests).toHaveLength(0);
    expect(await balanceMicros(server, user.userId)).toBe(FUNDS);
    const one = await postJson(server, "/v1/completions", user.key, { ...body, best_of: 1 });
    expect(one.status).toBe(200);
    expect(dataEvents(await one.text()).at(-1)).toBe("[DONE]");
  });

  it("Idempotency-Key: a completed streamed completion is replayed event for event, Deprecation header included, charged once", async () => {
    const user = await fundedUser(server, 1);
    const body = { model: "text-davinci-003", prompt: "once only", max_tokens: 5, stream: true, stream_options: { include_usage: true } };
    const headers = { "idempotency-key": "completion-stream-1" };
    const first = await postJson(server, "/v1/completions", user.key, body, headers);
    const events = await first.text();
    expect(events.endsWith("data: [DONE]\n\n")).toBe(true);
    const again = await postJson(server, "/v1/completions", user.key, body, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("deprecation")).toBe("true");
    expect(await again.text()).toBe(events);
    expect(fakes.textA.requests).toHaveLength(1);
    expect(FUNDS - (await balanceMicros(server, user.userId))).toBe(textCost(2, 3));
  });
});
