import { DEFAULT_PLANS } from "@gw/config";
import { describe, expect, it } from "vitest";
import { decodeBase64Floats } from "@gw/providers";
import { fakeEmbedding } from "@gw/test-support";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";
import { useSdkHarness } from "./support/sdk-harness";

const messages = [{ role: "user", content: "hi there" }];

describe("OpenAI request parameters: validated for every model, mapped or refused per protocol", () => {
  // many refused requests in a row: a plan whose requests per minute do not get in the way
  const h = useSdkHarness({ plans: DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 100_000 } : p)) });

  const post = (path: string, body: Record<string, unknown>) => postJson(h.server, path, h.user.key, body);

  /** A 400 invalid_parameter whose message names `param`, without any upstream call or charge. */
  async function expectRefused(res: Response, param: string): Promise<string> {
    expect(res.status).toBe(400);
    const { error } = await readJson(res);
    expect(error.code).toBe("invalid_parameter");
    expect(error.message).toContain(`'${param}'`);
    return error.message as string;
  }

  it.each(["textA-4", "textB-3-haiku"])("%s: wrong types and ranges of the known optional fields are 400, naming the field, before any upstream call", async (model) => {
    const before = await balanceMicros(h.server, h.user.userId);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ stop: 5 }, "stop"],
      [{ stop: ["a", "b", "c", "d", "e"] }, "stop"],
      [{ stop: [1] }, "stop[0]"],
      [{ top_p: "x" }, "top_p"],
      [{ top_p: 1.5 }, "top_p"],
      [{ presence_penalty: 5 }, "presence_penalty"],
      [{ frequency_penalty: -2.5 }, "frequency_penalty"],
      [{ logprobs: "yes" }, "logprobs"],
      [{ logprobs: true, top_logprobs: 21 }, "top_logprobs"],
      [{ top_logprobs: 2 }, "top_logprobs"],
      [{ seed: 1.5 }, "seed"],
      [{ user: 5 }, "user"],
      [{ response_format: "json" }, "response_format"],
      [{ response_format: { type: "xml" } }, "response_format.type"],
      [{ response_format: { type: "json_schema", json_schema: "x" } }, "response_format.json_schema"],
      [{ logit_bias: { 50256: 200 } }, "logit_bias.50256"],
      [{ parallel_tool_calls: "no" }, "parallel_tool_calls"],
      [{ tools: {} }, "tools"],
      // a forced call without tools: OpenAI refuses it; textB answered in text as if nothing had been forced
      [{ tool_choice: "required" }, "tool_choice"],
      [{ tool_choice: { type: "function", function: { name: "get_weather" } } }, "tool_choice"],
      [{ tool_choice: "required", tools: [] }, "tool_choice"],
    ];
    for (const [extra, param] of cases) await expectRefused(await post("/v1/chat/completions", { model, messages, ...extra }), param);
    expect(h.fakes.textA.requests).toHaveLength(0);
    expect(h.fakes.textB.requests).toHaveLength(0);
    expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
  });

  it.each(["textA-4", "textB-3-haiku"])("%s: store, metadata (chat) and suffix (completions) of a wrong type or size are 400 naming them, before any upstream call", async (model) => {
    const before = await balanceMicros(h.server, h.user.userId);
    const invalid = (param: string, rule: string) => ({ error: { message: `Invalid parameter '${param}': ${rule}.`, type: "invalid_request_error", code: "invalid_parameter" } });
    const cases: Array<[string, Record<string, unknown>, ReturnType<typeof invalid>]> = [
      ["/v1/chat/completions", { store: "yes" }, invalid("store", "must be a boolean")],
      ["/v1/chat/completions", { metadata: "x" }, invalid("metadata", "must be a record")],
      ["/v1/chat/completions", { metadata: { a: 1 } }, invalid("metadata.a", "must be a string")],
      ["/v1/chat/completions", { metadata: { a: "v".repeat(513) } }, invalid("metadata.a", "must have at most 512 characters")],
      ["/v1/chat/completions", { metadata: { ["k".repeat(65)]: "v" } }, invalid("metadata", "must have keys of at most 64 characters")],
      ["/v1/chat/completions", { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }, invalid("metadata", "must have at most 16 keys")],
      ["/v1/completions", { suffix: 5 }, invalid("suffix", "must be a string")],
    ];
    for (const [path, extra, expected] of cases) {
      const res = await post(path, path === "/v1/completions" ? { model, prompt: "hi", ...extra } : { model, messages, ...extra });
      expect(res.status).toBe(400);
      expect(await readJson(res)).toEqual(expected);
    }
    expect(h.fakes.textA.requests).toHaveLength(0);
    expect(h.fakes.textB.requests).toHaveLength(0);
    expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
    // valid ones: OpenAI-compatible upstreams get them as sent, Messages models leave them out
    const ok = await post("/v1/chat/completions", { model, messages, max_tokens: 5, store: true, metadata: { team: "a", ["k".repeat(64)]: "v".repeat(512) } });
    expect(ok.status).toBe(200);
    if (model === "textA-4") expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ store: true, metadata: { team: "a", ["k".repeat(64)]: "v".repeat(512) } });
  });

  it("textA: valid known fields and unknown ones go upstream as sent", async () => {
    const extra = {
      stop: ["END"], top_p: 0.5, presence_penalty: 1, frequency_penalty: -1, logprobs: true, top_logprobs: 3, seed: 7, user: "u-1",
      response_format: { type: "json_object" }, logit_bias: { 50256: -100 }, some_new_field: { a: 1 },
    };
    const res = await post("/v1/chat/completions", { model: "textA-4", messages, ...extra });
    expect(res.status).toBe(200);
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject(extra);
  });

  it("textB: stop, top_p and user are mapped to Messages fields; the defaults of fields without an equivalent are left out", async () => {
    const res = await post("/v1/chat/completions", {
      model: "textB-3-haiku", messages, stop: "END", top_p: 0.5, user: "u-1", seed: null, presence_penalty: 0, frequency_penalty: 0,
      logit_bias: {}, logprobs: false, response_format: { type: "text" },
    });
    expect(res.status).toBe(200);
    const sent = h.fakes.textB.lastRequest()?.json as Record<string, unknown>;
    expect(sent).toMatchObject({ stop_sequences: ["END"], top_p: 0.5, metadata: { user_id: "u-1" } });
    for (const field of ["stop", "user", "seed", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "response_format"]) {
      expect(sent).not.toHaveProperty(field);
    }
  });

  it("textB: a user longer than Messages' 256-character metadata.user_id is 400 naming user, before any upstream call; textA takes it", async () => {
    const before = await balanceMicros(h.server, h.user.userId);
    for (const path of ["/v1/chat/completions", "/v1/completions"]) {
      const body = path === "/v1/completions" ? { prompt: "hi" } : { messages };
      const res = await post(path, { model: "textB-3-haiku", ...body, max_tokens: 5, user: "u".repeat(257) });
      expect(res.status).toBe(400);
      expect(await readJson(res)).toEqual({ error: {
        message: "Invalid parameter 'user': must have at most 256 characters for model 'textB-3-haiku' (its protocol's limit for the end-user id).",
        type: "invalid_request_error", code: "invalid_parameter",
      } });
    }
    expect(h.fakes.textB.requests).toHaveLength(0);
    expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
    const atLimit = await post("/v1/chat/completions", { model: "textB-3-haiku", messages, max_tokens: 5, user: "u".repeat(256) });
    expect(atLimit.status).toBe(200);
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({ metadata: { user_id: "u".repeat(256) } });
    const textA = await post("/v1/chat/completions", { model: "textA-4", messages, max_tokens: 5, user: "u".repeat(257) });
    expect(textA.status).toBe(200);
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ user: "u".repeat(257) });
  });

  it("textB: fields that would change what the answer is (logprobs, JSON response formats, whitespace stops, legacy functions) are 400 naming them, not ignored", async () => {
    const model = "textB-3-haiku";
    const cases: Array<[Record<string, unknown>, string]> = [
      // Messages refuses a stop sequence without a non-whitespace character (OpenAI clients often send "\n")
      [{ stop: "\n" }, "stop"],
      [{ stop: ["END", " \t"] }, "stop"],
      [{ logprobs: true }, "logprobs"],
      [{ logprobs: true, top_logprobs: 2 }, "logprobs"],
      [{ response_format: { type: "json_object" } }, "response_format"],
      [{ response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } } }, "response_format"],
      // legacy function calling: the model would never see the functions (it answered in text, as if none were offered)
      [{ functions: [{ name: "get_weather", parameters: { type: "object", properties: {} } }] }, "functions"],
      [{ functions: [{ name: "get_weather" }], function_call: { name: "get_weather" } }, "functions"],
      [{ function_call: "auto" }, "function_call"],
    ];
    for (const stream of [false, true]) {
      for (const [extra, param] of cases) {
        const message = await expectRefused(await post("/v1/chat/completions", { model, messages, stream, ...extra }), param);
        expect(message).toContain(model);
      }
    }
    expect(h.fakes.textB.requests).toHaveLength(0);
  });

  it("textB: those refusals, and a conversation of system prompts alone, come before the credit hold (an account without credits still gets the 400)", async () => {
    const broke = await fundedUser(h.server, 0);
    for (const stream of [false, true]) {
      const res = await postJson(h.server, "/v1/chat/completions", broke.key, { model: "textB-3-haiku", messages, stream, logprobs: true });
      await expectRefused(res, "logprobs");
      const systemOnly = await postJson(h.server, "/v1/chat/completions", broke.key, { model: "textB-3-haiku", messages: [{ role: "system", content: "be brief" }], stream });
      expect(await expectRefused(systemOnly, "messages")).toContain("at least one user or assistant message");
    }
    expect(h.fakes.textB.requests).toHaveLength(0);
  });

  it("max_completion_tokens over the model's cap is refused naming max_completion_tokens", async () => {
    const message = await expectRefused(await post("/v1/chat/completions", { model: "textA-4-turbo", messages, max_completion_tokens: 5000 }), "max_completion_tokens");
    expect(message).not.toContain("'max_tokens'");
    const streamed = await post("/v1/chat/completions", { model: "textA-4-turbo", messages, max_completion_tokens: 5000, stream: true });
    expect(await expectRefused(streamed, "max_completion_tokens")).not.toContain("'max_tokens'");
  });

  it("textA-4 and textA-4-32k take max_tokens up to their context window less the prompt (no separate output cap, as GPT-4's)", async () => {
    for (const [model, window] of [["textA-4", 8192], ["textA-4-32k", 32768]] as const) {
      h.fakes.clearAll();
      const res = await post("/v1/chat/completions", { model, messages, max_tokens: window - 100 });
      expect(res.status, model).toBe(200);
      expect((h.fakes.textA.lastRequest()?.json as Record<string, unknown>).max_tokens).toBe(window - 100);
      const over = await post("/v1/chat/completions", { model, messages, max_tokens: window });
      expect(await expectRefused(over, "max_tokens"), model).toContain(`exceeds the ${window}-token context window`);
    }
  });

  it("max_completion_tokens goes upstream under its own name (OpenAI's reasoning models refuse max_tokens), streamed or not", async () => {
    for (const stream of [false, true]) {
      const res = await post("/v1/chat/completions", { model: "textA-4", messages, max_completion_tokens: 3, stream });
      expect(res.status).toBe(200);
      await res.text();
      const sent = h.fakes.textA.lastRequest()?.json as Record<string, unknown>;
      expect(sent.max_completion_tokens).toBe(3);
      expect(sent).not.toHaveProperty("max_tokens");
    }
    // the client's max_tokens, and the budget sent when the client names none, keep the classic name
    await post("/v1/chat/completions", { model: "textA-4", messages });
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ max_tokens: expect.any(Number) });
    expect(h.fakes.textA.lastRequest()?.json).not.toHaveProperty("max_completion_tokens");
  });

  it("stream_options without stream: true is 400 naming stream_options, on /v1/chat/completions, /v1/completions and the task endpoint", async () => {
    const options = { include_usage: true };
    const message = await expectRefused(await post("/v1/chat/completions", { model: "textA-4", messages, stream_options: options }), "stream_options");
    expect(message).toContain("only allowed when 'stream' is enabled");
    await expectRefused(await post("/v1/chat/completions", { model: "textB-3-haiku", messages, stream: false, stream_options: options }), "stream_options");
    await expectRefused(await post("/v1/completions", { model: "text-davinci-003", prompt: "hi", stream_options: options }), "stream_options");
    await expectRefused(await post("/api/v1/task", { model: "textA-4", messages, stream_options: options }), "stream_options");
    expect(h.fakes.textA.requests).toHaveLength(0);
    // null is "not given"
    expect((await post("/v1/chat/completions", { model: "textA-4", messages, stream_options: null })).status).toBe(200);
  });

  it("embeddings: dimensions and user (and unknown fields) reach the upstream; their types are checked", async () => {
    const res = await post("/v1/embeddings", { model: "text-embedding-ada-002", input: "hello", dimensions: 4, user: "u-1", some_new_field: true });
    expect(res.status).toBe(200);
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ dimensions: 4, user: "u-1", some_new_field: true, encoding_format: "base64" });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ dimensions: 0 }, "dimensions"],
      [{ dimensions: "4" }, "dimensions"],
      [{ dimensions: 1.5 }, "dimensions"],
      [{ user: 5 }, "user"],
      [{ encoding_format: "hex" }, "encoding_format"],
    ];
    h.fakes.clearAll();
    for (const [extra, param] of cases) await expectRefused(await post("/v1/embeddings", { model: "text-embedding-ada-002", input: "hello", ...extra }), param);
    expect(h.fakes.textA.requests).toHaveLength(0);
  });

  it.each(["text-davinci-003", "textB-3-haiku"])("completions on %s without max_tokens: OpenAI's 16-token default is held and sent, so a small balance is enough", async (model) => {
    // $0.001: far below a hold of the model's whole output cap (~$0.008), far above 16 tokens' worth
    const caller = await fundedUser(h.server, 0.001);
    const res = await postJson(h.server, "/v1/completions", caller.key, { model, prompt: "hello there" });
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body.object).toBe("text_completion");
    const sent = (model === "textB-3-haiku" ? h.fakes.textB : h.fakes.textA).lastRequest()?.json as Record<string, unknown>;
    expect(sent.max_tokens).toBe(16);
    const cost = body.usage.prompt_tokens + 2 * body.usage.completion_tokens;
    expect(res.headers.get("x-request-cost")).toBe((cost / 1e6).toFixed(6));
    expect(await balanceMicros(h.server, caller.userId)).toBe(1000 - cost);
  });

  it("completions: best_of is held for every candidate the upstream bills, and charged as the upstream reports", async () => {
    // prompt held as 2 tokens + 3 for the reply; each of the 3 candidates may write 10 tokens: 5 + 2 * 30 = 65 micro-dollars
    const body = { model: "text-davinci-003", prompt: "a b", max_tokens: 10, best_of: 3 };
    const short = await fundedUser(h.server, 0.00005);
    const refused = await postJson(h.server, "/v1/completions", short.key, body);
    expect(refused.status).toBe(402);
    expect((await readJson(refused)).error).toMatchObject({ code: "insufficient_credits", current_balance: 0.00005, required_amount: 0.000065 });
    expect(h.fakes.textA.requests).toHaveLength(0);
    const before = await balanceMicros(h.server, h.user.userId);
    const res = await post("/v1/completions", body);
    expect(res.status).toBe(200);
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ best_of: 3 });
    // the fake bills "Echo: a b" (3 tokens) three times
    expect((await readJson(res)).usage).toEqual({ prompt_tokens: 2, completion_tokens: 9, total_tokens: 11 });
    expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(2 + 2 * 9);
    for (const best_of of [0, 21, 1.5, "2"]) await expectRefused(await post("/v1/completions", { ...body, best_of }), "best_of");
  });

  it("completions on a textB model: the prompt is one user message to Messages (max_tokens 16 unless set, as OpenAI's default), charged as reported", async () => {
    const before = await balanceMicros(h.server, h.user.userId);
    const res = await post("/v1/completions", { model: "textB-2", prompt: "say this please" });
    expect(res.status).toBe(200);
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({ model: "textB-2", max_tokens: 16, messages: [{ role: "user", content: "say this please" }] });
    expect(await readJson(res)).toMatchObject({
      object: "text_completion", model: "textB-2",
      choices: [{ text: "Echo: say this please", index: 0, logprobs: null, finish_reason: "stop" }],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    });
    // 3 prompt tokens at 1 micro-dollar, 4 completion tokens at 2
    expect(res.headers.get("x-request-cost")).toBe("0.000011");
    expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(11);
    const limited = await post("/v1/completions", { model: "textB-instant-1", prompt: "a b c d e", max_tokens: 2 });
    expect(limited.status).toBe(200);
    expect(h.fakes.textB.lastRequest()?.json).toMatchObject({ model: "textB-instant-1", max_tokens: 2 });
    expect((await readJson(limited)).choices[0]).toMatchObject({ text: "Echo: a", finish_reason: "length" });
    // what Messages cannot give back is refused, not dropped, before any upstream call
    h.fakes.clearAll();
    const refusals: Array<[Record<string, unknown>, string]> = [[{ echo: true }, "echo"], [{ logprobs: 2 }, "logprobs"], [{ suffix: "end" }, "suffix"], [{ best_of: 2 }, "best_of"]];
    for (const [extra, param] of refusals) await expectRefused(await post("/v1/completions", { model: "textB-2", prompt: "hi", ...extra }), param);
    expect(h.fakes.textB.requests).toHaveLength(0);
  });

  it("completions: a prompt longer than the context window is refused naming prompt (the field it sent), not messages", async () => {
    const message = await expectRefused(await post("/v1/completions", { model: "text-davinci-003", prompt: "word ".repeat(5000) }), "prompt");
    expect(message).toMatch(/^Invalid parameter 'prompt': the prompt has about \d+ tokens, more than the 4097-token context window of 'text-davinci-003'\.$/);
    expect(h.fakes.textA.requests).toHaveLength(0);
  });

  it("completions: max_tokens up to the context window less the prompt's tokens is accepted, streamed or not (the completions API has no chat framing)", async () => {
    // "hi" is one token: 1 + 4096 fills text-davinci-003's 4097-token window exactly, as at OpenAI
    for (const stream of [false, true]) {
      h.fakes.clearAll();
      const res = await post("/v1/completions", { model: "text-davinci-003", prompt: "hi", max_tokens: 4096, stream });
      expect(res.status).toBe(200);
      await res.text();
      expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ prompt: "hi", max_tokens: 4096 });
    }
    const over = await post("/v1/completions", { model: "text-davinci-003", prompt: "hi", max_tokens: 4097 });
    expect(over.status).toBe(400);
    expect(await readJson(over)).toEqual({ error: {
      message: "Invalid parameter 'max_tokens': prompt (about 1 tokens) plus max_tokens exceeds the 4097-token context window of 'text-davinci-003'.",
      type: "invalid_request_error", code: "invalid_parameter",
    } });
  });

  it("embeddings: input as a string, strings, token ids or token arrays; token inputs reach the upstream as ids and are charged by their count", async () => {
    const cases: Array<[unknown, unknown, Array<string | number[]>, number]> = [
      ["one two", ["one two"], ["one two"], 2],
      [["one", "two three"], ["one", "two three"], ["one", "two three"], 3],
      [[1, 2, 3], [[1, 2, 3]], [[1, 2, 3]], 3],
      [[[1, 2], [3, 4, 5, 6]], [[1, 2], [3, 4, 5, 6]], [[1, 2], [3, 4, 5, 6]], 6],
      // one token array is one input, however long (up to the model's context window)
      [Array.from({ length: 3000 }, () => 7), [Array.from({ length: 3000 }, () => 7)], [Array.from({ length: 3000 }, () => 7)], 3000],
    ];
    for (const [input, sent, embedded, promptTokens] of cases) {
      const before = await balanceMicros(h.server, h.user.userId);
      const res = await post("/v1/embeddings", { model: "text-embedding-ada-002", input, encoding_format: "float" });
      expect(res.status).toBe(200);
      expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ input: sent });
      const body = await readJson(res);
      expect(body.data.map((d: { embedding: number[] }) => d.embedding)).toEqual(embedded.map((e) => fakeEmbedding(e)));
      expect(body.usage).toEqual({ prompt_tokens: promptTokens, total_tokens: promptTokens });
      // SPEC 8: text input price, $0.001 per 1000 tokens = 1 micro-dollar per token
      expect(res.headers.get("x-request-cost")).toBe((promptTokens / 1e6).toFixed(6));
      expect(before - (await balanceMicros(h.server, h.user.userId))).toBe(promptTokens);
    }
  });

  it("embeddings: empty, mixed, negative, fractional and oversized inputs are 400, naming the input, without an upstream call or charge", async () => {
    const before = await balanceMicros(h.server, h.user.userId);
    const cases: Array<[unknown, string]> = [
      ["", "input"],
      [[], "input"],
      [[""], "input[0]"],
      [[[]], "input[0]"],
      [["a", 1], "input[1]"],
      [[1, "a"], "input[1]"],
      [[[1], 2], "input[1]"],
      [[-1], "input[0]"],
      [[1.5], "input[0]"],
      [[[1, -2]], "input[0][1]"],
      [[true], "input[0]"],
      [[null], "input[0]"],
      [{ tokens: [1] }, "input"],
      [Array.from({ length: 2049 }, () => "a"), "input"],
      [Array.from({ length: 2049 }, () => [1]), "input"],
      [Array.from({ length: 8192 }, () => 1), "input"],
      [[Array.from({ length: 8192 }, () => 1)], "input[0]"],
    ];
    for (const [input, param] of cases) {
      const message = await expectRefused(await post("/v1/embeddings", { model: "text-embedding-ada-002", input }), param);
      expect(message).not.toMatch(/\n|zod|Error:/);
    }
    expect(h.fakes.textA.requests).toHaveLength(0);
    expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
  });

  it("embeddings: an input of an array that is over the context window is named by its index, without an upstream call or charge", async () => {
    const before = await balanceMicros(h.server, h.user.userId);
    const tooLong = "word ".repeat(9000);
    const refused = (param: string) => ({ error: {
      message: `Invalid parameter '${param}': an input exceeds the 8191-token limit of 'text-embedding-ada-002'.`, type: "invalid_request_error", code: "invalid_parameter",
    } });
    const cases: Array<[unknown, string]> = [
      [tooLong, "input"],
      [["short", tooLong, "short"], "input[1]"],
      [[[1, 2], Array.from({ length: 8192 }, () => 5)], "input[1]"],
      // one array of token ids is one input
      [Array.from({ length: 8192 }, () => 5), "input"],
    ];
    for (const [input, param] of cases) {
      const res = await post("/v1/embeddings", { model: "text-embedding-ada-002", input });
      expect(res.status).toBe(400);
      expect(await readJson(res)).toEqual(refused(param));
    }
    expect(h.fakes.textA.requests).toHaveLength(0);
    expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
  });

  it("embeddings: the upstream is always asked for base64; the client gets the encoding it asked for", async () => {
    const asBase64 = await readJson(await post("/v1/embeddings", { model: "text-embedding-ada-002", input: "hello", encoding_format: "base64" }));
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ encoding_format: "base64" });
    expect(decodeBase64Floats(asBase64.data[0].embedding as string)).toEqual(fakeEmbedding("hello"));
    const asFloat = await readJson(await post("/v1/embeddings", { model: "text-embedding-ada-002", input: "hello" }));
    expect(h.fakes.textA.lastRequest()?.json).toMatchObject({ encoding_format: "base64" });
    expect(asFloat.data[0].embedding).toEqual(fakeEmbedding("hello"));
  });
});
