import { DEFAULT_PLANS } from "@gw/config";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";
import { useSdkHarness } from "./support/sdk-harness";

// SPEC 8 prices in micro-dollars: 1 per input token, 2 per output token.
const textCost = (usage: { prompt_tokens: number; completion_tokens: number }) => usage.prompt_tokens + 2 * usage.completion_tokens;
const messages = [{ role: "user" as const, content: "hello brave new world" }];

describe("chat completions parameters on every text model, and the endpoints of /v1/models", () => {
  const h = useSdkHarness({ plans: DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 10_000 })) });

  async function charged<T>(call: () => Promise<T>): Promise<{ result: T; cost: number }> {
    const before = await balanceMicros(h.server, h.user.userId);
    const result = await call();
    return { result, cost: before - (await balanceMicros(h.server, h.user.userId)) };
  }

  async function refusal(call: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
    const err = await call().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    return err as InstanceType<typeof OpenAI.APIError>;
  }

  it("textA: n: 2 is sent upstream and answers two choices, charged the upstream's usage of both", async () => {
    const { result, cost } = await charged(() => h.client.chat.completions.create({ model: "textA-4", messages, max_tokens: 20, n: 2 }));
    expect(result.choices.map((c) => c.index)).toEqual([0, 1]);
    for (const choice of result.choices) expect(choice.message.content).toBe("Echo: hello brave new world");
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ n: 2 });
    expect(result.usage).toEqual({ prompt_tokens: 4, completion_tokens: 10, total_tokens: 14 });
    expect(cost).toBe(textCost({ prompt_tokens: 4, completion_tokens: 10 }));
  });

  it("textB (Messages has no n): n: 3 is three calls, their usage summed and charged", async () => {
    const { result, cost } = await charged(() => h.client.chat.completions.create({ model: "textB-3-haiku", messages, max_tokens: 20, n: 3 }));
    expect(result.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([0, 1, 2].map((i) => [i, "Echo: hello brave new world", "stop"]));
    expect(h.fakes.textB.requests.filter((r) => r.path === "/v1/messages")).toHaveLength(3);
    for (const request of h.fakes.textB.requests) expect(request.json).not.toHaveProperty("n");
    const usage = result.usage ?? { prompt_tokens: 0, completion_tokens: 0 };
    expect(usage.prompt_tokens % 3).toBe(0);
    expect(usage.completion_tokens % 3).toBe(0);
    expect(cost).toBe(textCost(usage));
  });

  it("textA: n: 2 streams both choices interleaved, each with its role and finish chunk; the usage chunk charged", async () => {
    const before = await balanceMicros(h.server, h.user.userId);
    const stream = await h.client.chat.completions.create({ model: "textA-4", messages, max_tokens: 20, n: 2, stream: true, stream_options: { include_usage: true } });
    const texts = ["", ""];
    const finishes: Array<string | null> = [null, null];
    const roles = [0, 0];
    let usage: { prompt_tokens: number; completion_tokens: number; cost?: number } | undefined;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        texts[choice.index] += choice.delta.content ?? "";
        if (choice.delta.role) roles[choice.index] = (roles[choice.index] ?? 0) + 1;
        if (choice.finish_reason) finishes[choice.index] = choice.finish_reason;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(texts).toEqual(["Echo: hello brave new world", "Echo: hello brave new world"]);
    expect(roles).toEqual([1, 1]);
    expect(finishes).toEqual(["stop", "stop"]);
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ n: 2, stream: true });
    expect(usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 10 });
    const cost = textCost({ prompt_tokens: 4, completion_tokens: 10 });
    expect(usage?.cost).toBe(cost / 1e6);
    expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(cost);
  });

  it("n beyond what the balance covers is 402 (the hold covers n answers); streamed n above 1 on textB is 400 naming n; nothing charged", async () => {
    const poor = await fundedUser(h.server, 0.001);
    const client = new OpenAI({ apiKey: poor.key, baseURL: `${h.server.url}/v1`, maxRetries: 0 });
    const broke = await refusal(() => client.chat.completions.create({ model: "textA-4", messages, max_tokens: 100, n: 10 }));
    expect(broke.status).toBe(402);
    expect(broke.error).toMatchObject({ code: "insufficient_credits", current_balance: 0.001 });
    expect(await balanceMicros(h.server, poor.userId)).toBe(1_000);
    await client.chat.completions.create({ model: "textA-4", messages, max_tokens: 100, n: 1 });

    const streamed = await refusal(() => h.client.chat.completions.create({ model: "textB-3-haiku", messages, n: 2, stream: true }));
    expect(streamed.status).toBe(400);
    expect(streamed.error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'n'") });
    const streamedBroke = await refusal(() => client.chat.completions.create({ model: "textA-4", messages, max_tokens: 100, n: 10, stream: true }));
    expect(streamedBroke.status).toBe(402);
    const zero = await postJson(h.server, "/v1/chat/completions", h.user.key, { model: "textA-4", messages, n: 0 });
    expect((await readJson(zero)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'n'") });
  });

  it("textA: stop, seed, top_p, penalties, logprobs and response_format reach the upstream; logprobs come back", async () => {
    const params = {
      stop: ["END"], seed: 7, top_p: 0.5, presence_penalty: 0.5, frequency_penalty: -0.5, logprobs: true, top_logprobs: 2,
      response_format: { type: "json_schema" as const, json_schema: { name: "answer", schema: { type: "object" } } },
    };
    const result = await h.client.chat.completions.create({ model: "textA-4", messages, ...params });
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject(params);
    expect(result.choices[0]?.logprobs?.content?.map((t) => t.token)).toEqual(["Echo:", " hello", " brave", " new", " world"]);
    const json = await h.client.chat.completions.create({ model: "textC-8x7b", messages, response_format: { type: "json_object" }, n: 2 });
    expect(json.choices).toHaveLength(2);
    expect(h.fakes.textC.lastRequest()?.json).toMatchObject({ response_format: { type: "json_object" }, n: 2 });
  });

  it("textB: stop and top_p are mapped; what Messages cannot do is 400 naming the field, at no cost; default penalties pass", async () => {
    await h.client.chat.completions.create({ model: "textB-3-haiku", messages, stop: "END", top_p: 0.5, presence_penalty: 0, frequency_penalty: 0 });
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({ stop_sequences: ["END"], top_p: 0.5 });
    const before = await balanceMicros(h.server, h.user.userId);
    const sent = h.fakes.textB.requests.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ seed: 7 }, "seed"],
      [{ presence_penalty: 0.5 }, "presence_penalty"],
      [{ frequency_penalty: -1 }, "frequency_penalty"],
      [{ logit_bias: { 50256: -100 } }, "logit_bias"],
      [{ logprobs: true }, "logprobs"],
      [{ response_format: { type: "json_object" } }, "response_format"],
    ];
    for (const [params, field] of cases) {
      const err = await refusal(() => h.client.chat.completions.create({ model: "textB-3-haiku", messages, ...params }));
      expect(err.status).toBe(400);
      expect(err.error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining(`'${field}'`) });
    }
    expect(h.fakes.textB.requests.length).toBe(sent);
    expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
  });

  it("GET /v1/models, /api/v1/models and one model's entry list the endpoints that serve it", async () => {
    const list = await h.client.models.list();
    const byId = new Map(list.data.map((m) => [m.id, m as unknown as { endpoints: string[] }]));
    expect(byId.get("textB-3-haiku")?.endpoints).toEqual(expect.arrayContaining(["/v1/chat/completions", "/v1/completions", "/api/v1/task"]));
    expect(byId.get("text-embedding-ada-002")?.endpoints).toEqual(["/v1/embeddings"]);
    expect(byId.get("imageA")?.endpoints).toEqual(["/v1/images/generations", "/api/v1/imageA/generate"]);
    expect(byId.get("imageB-1-dev")?.endpoints).toEqual(["/v1/images/generations", "/api/v1/task", "/api/v1/imageB.1"]);
    expect(byId.get("speechvendor-tts")?.endpoints).toEqual(["/v1/audio/speech", "/api/v1/task"]);
    expect(byId.get("speechvendor-stt")?.endpoints).toEqual(["/v1/audio/transcriptions", "/api/v1/task"]);
    expect(byId.get("speechvendor-sts")?.endpoints).toEqual(["/api/v1/task"]);
    const one = await h.client.models.retrieve("speechvendor-tts");
    expect(one).toMatchObject({ id: "speechvendor-tts", object: "model", type: "speech", endpoints: ["/v1/audio/speech", "/api/v1/task"] });
    const api = await fetch(`${h.server.url}/api/v1/models`, { headers: { authorization: `Bearer ${h.user.key}` } });
    const apiList = (await readJson(api)) as { data: Array<{ id: string; endpoints: string[] }> };
    expect(apiList.data.find((m) => m.id === "imageA")?.endpoints).toEqual(["/v1/images/generations", "/api/v1/imageA/generate"]);
  });
});
