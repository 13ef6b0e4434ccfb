import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { DEFAULT_PLANS } from "@gw/config";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { countTokens } from "@gw/providers";
import { fakeChatReply, startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";

/** The text a stream's chunks carried. */
const deltaText = (sse: string): string => sse.split("\n\n").filter((e) => e.startsWith("data: {") && e.includes('"delta"'))
  .map((e) => (JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string | null } }> }).choices[0]?.delta.content ?? "").join("");

/** A streamed answer that came through whole, without an error event: the fake's reply to `messages` (100 tokens at most). */
async function expectWholeStream(res: Response, messages: { role: string; content: string }[]): Promise<ReturnType<typeof fakeChatReply>> {
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text).not.toContain('"error"');
  expect(text.trim().split("\n\n").at(-1)).toBe("data: [DONE]");
  const reply = fakeChatReply(messages, 100);
  expect(deltaText(text)).toBe(reply.content);
  return reply;
}

/**
 * A bare upstream answering every request with `answer` (textA's OpenAI paths and textB's `/v1/messages` alike), and
 * a gateway pointed at it for both, without retries. `stand.server` is set before the tests run.
 */
function rawUpstreamStand(answer: (req: IncomingMessage, res: ServerResponse) => void): { server: TestServer } {
  const stand = {} as { server: TestServer };
  let upstream: Server;
  beforeAll(async () => {
    upstream = createServer((req, res) => {
      req.resume();
      req.on("end", () => answer(req, res));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    stand.server = await startTestServer({
      env: { TEXTA_BASE_URL: base, TEXTA_API_KEY: "sk-operator", TEXTB_BASE_URL: base, TEXTB_API_KEY: "sk-ant-operator", UPSTREAM_MAX_RETRIES: "0" },
    });
  });
  afterAll(async () => {
    await stand.server.close();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });
  return stand;
}

describe("upstream faults: what the gateway answers and charges when an upstream misbehaves", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  const MAX_BYTES = 32 * 1024;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 100_000, concurrentRequests: 1_000 } : p));
    server = await startTestServer({
      env: { ...fakes.env, UPSTREAM_MAX_RETRIES: "1", UPSTREAM_TIMEOUT_MS: "3000", UPSTREAM_MAX_RESPONSE_BYTES: String(MAX_BYTES) },
      config: { plans },
    });
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });
  beforeEach(() => fakes.clearAll());

  it("an answer larger than UPSTREAM_MAX_RESPONSE_BYTES is 502 upstream_error, costs nothing, is not retried, and the gateway keeps serving", async () => {
    const user = await fundedUser(server, 1);
    fakes.textA.failNext(1, { kind: "huge", bytes: 64 * 1024 * 1024 });
    const chat = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 10 });
    expect(chat.status).toBe(502);
    expect((await readJson(chat)).error).toMatchObject({ code: "upstream_error", type: "api_error", message: "The upstream answer was larger than the gateway accepts." });
    expect(fakes.textA.requests).toHaveLength(1);

    fakes.speech.failNext(1, { kind: "huge", bytes: 64 * 1024 * 1024 }, { path: "/v1/text-to-speech" });
    const speech = await postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text: "hello", voice: "Rachel" });
    expect(speech.status).toBe(502);
    expect((await readJson(speech)).error.code).toBe("upstream_error");
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000);

    const after = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 10 });
    expect(after.status).toBe(200);
  });

  it("a stream that grows past the limit after output began ends with an error event and is charged for what was produced", async () => {
    const user = await fundedUser(server, 1);
    // every word of the prompt comes back as one chunk of ~200 bytes: far more than MAX_BYTES in all
    const prompt = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ");
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: prompt }], max_tokens: 1000, stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("The upstream answer was larger than the gateway accepts.");
    expect(text).not.toContain("[DONE]");
    const produced = deltaText(text);
    expect(produced.length).toBeGreaterThan(0);
    const spent = 1_000_000 - (await balanceMicros(server, user.userId));
    expect(spent).toBe(countTokens(prompt) + 4 + 3 + 2 * countTokens(produced));
  });

  it.each([
    ["textA-4", "its role chunk"],
    ["textB-3-haiku", "message_start"],
  ])("%s: a stream whose connection breaks after %s, before any output reached the client, is retried and answered whole", async (model) => {
    const user = await fundedUser(server, 1);
    const fake = model === "textA-4" ? fakes.textA : fakes.textB;
    fake.failNext(1, { kind: "truncate", at: "start" });
    const messages = [{ role: "user", content: "one two three" }];
    const res = await postJson(server, "/v1/chat/completions", user.key, { model, messages, max_tokens: 100, stream: true });
    const reply = await expectWholeStream(res, messages);
    expect(fake.requests).toHaveLength(2);
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(reply.promptTokens + 2 * reply.completionTokens);
  });

  it("a non-streamed answer whose connection breaks mid-body, before anything reached the client, is retried; past the retries it is 502 at no cost", async () => {
    const user = await fundedUser(server, 1);
    const messages = [{ role: "user", content: "one two three" }];
    const charged = async () => 1_000_000 - (await balanceMicros(server, user.userId));
    fakes.textA.failNext(1, { kind: "truncate" });
    const chat = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages, max_tokens: 100 });
    expect(chat.status).toBe(200);
    const reply = fakeChatReply(messages, 100);
    expect((await readJson(chat)).choices[0].message.content).toBe(reply.content);
    expect(fakes.textA.requests).toHaveLength(2);
    expect(await charged()).toBe(reply.promptTokens + 2 * reply.completionTokens);

    fakes.clearAll();
    fakes.speech.failNext(1, { kind: "truncate" }, { path: "/v1/text-to-speech" });
    const speech = await postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text: "hello", voice: "Rachel" });
    expect(speech.status).toBe(200);
    expect((await readJson(speech)).object).toBe("speech.generation");
    expect(fakes.speech.requests.filter((r) => r.path.startsWith("/v1/text-to-speech"))).toHaveLength(2);
    // 5 characters at 15 micro-dollars each
    expect(await charged()).toBe(reply.promptTokens + 2 * reply.completionTokens + 75);

    fakes.clearAll();
    fakes.textA.failNext(2, { kind: "truncate" });
    const broken = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages, max_tokens: 100 });
    expect(broken.status).toBe(502);
    expect((await readJson(broken)).error).toEqual({ code: "upstream_error", type: "api_error", message: "The upstream answer broke off before it finished." });
    // UPSTREAM_MAX_RETRIES=1: two attempts
    expect(fakes.textA.requests).toHaveLength(2);
    expect(await charged()).toBe(reply.promptTokens + 2 * reply.completionTokens + 75);
  });

  it("an upstream 429/503 whose Retry-After is longer than the gateway waits is a 502 carrying that Retry-After, streamed or not, at no cost", async () => {
    const user = await fundedUser(server, 1);
    const messages = [{ role: "user", content: "one two three" }];
    for (const [model, fake] of [["textA-4", fakes.textA], ["textB-3-haiku", fakes.textB]] as const) {
      for (const stream of [false, true]) {
        fakes.clearAll();
        fake.failStatus(1, 429, { headers: { "retry-after": "30" } });
        const limited = await postJson(server, "/v1/chat/completions", user.key, { model, messages, max_tokens: 100, stream });
        expect(limited.status).toBe(502);
        // the SDKs wait this long before their retry, instead of retrying at once into the same refusal
        expect(limited.headers.get("retry-after")).toBe("30");
        expect((await readJson(limited)).error.code).toBe("upstream_error");
        // a wait over 5 s is not taken by the gateway: one attempt
        expect(fake.requests).toHaveLength(1);
      }
    }
    fakes.clearAll();
    fakes.textA.failStatus(2, 503, { headers: { "retry-after": "2" } });
    const unavailable = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages, max_tokens: 100 });
    // waited once (UPSTREAM_MAX_RETRIES=1), then refused again: the upstream's last word is passed on
    expect(unavailable.status).toBe(502);
    expect(unavailable.headers.get("retry-after")).toBe("2");
    expect(fakes.textA.requests).toHaveLength(2);
    fakes.clearAll();
    fakes.textA.failStatus(1, 500);
    const plain = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages, max_tokens: 100 });
    expect(plain.status).toBe(200);
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(fakeChatReply(messages, 100).promptTokens + 2 * fakeChatReply(messages, 100).completionTokens);
  });

  it("an upstream 429 whose Retry-After reaches past UPSTREAM_TIMEOUT_MS is a 502 carrying it at once, not a 504 after the whole timeout, at no cost", async () => {
    const user = await fundedUser(server, 1);
    // 4 s is a wait the gateway takes (<= 5 s), but the call's 3 s deadline would cut it short
    fakes.textA.failStatus(2, 429, { headers: { "retry-after": "4" } });
    const started = performance.now();
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 10 });
    expect(res.status).toBe(502);
    expect(res.headers.get("retry-after")).toBe("4");
    expect((await readJson(res)).error).toMatchObject({ code: "upstream_error", type: "api_error" });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(fakes.textA.requests).toHaveLength(1);
    expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
  });

  // An error event in a 200 stream before any output: OpenAI's {"error": {type: server_error}}, Messages' overloaded_error
  const erroredStreams = [
    { model: "textA-4", upstream: "textA", event: "an error event (server_error)", status: "a 500",
      message: "The upstream provider failed (HTTP 500): The server had an error while processing your request. Sorry about that!",
      fail: (n: number) => { fakes.textA.erroredStreams = n; } },
    { model: "textB-3-haiku", upstream: "textB", event: "an overloaded_error event (Messages' in-stream 529)", status: "a 529",
      message: "The upstream provider failed (HTTP 529): Overloaded.",
      fail: (n: number) => { fakes.textB.overloadedStreams = n; } },
  ] as const;
  it.each(erroredStreams)("$model: $event before any output is retried like $status; past the retries it is 502 at no cost", async ({ model, upstream, message, fail }) => {
    const user = await fundedUser(server, 1);
    const messages = [{ role: "user", content: "one two three" }];
    const charged = async () => 1_000_000 - (await balanceMicros(server, user.userId));
    fail(1);
    const res = await postJson(server, "/v1/chat/completions", user.key, { model, messages, max_tokens: 100, stream: true });
    const reply = await expectWholeStream(res, messages);
    expect(fakes[upstream].requests).toHaveLength(2);
    expect(await charged()).toBe(reply.promptTokens + 2 * reply.completionTokens);

    fakes.clearAll();
    fail(5);
    const failed = await postJson(server, "/v1/chat/completions", user.key, { model, messages, max_tokens: 100, stream: true });
    expect(failed.status).toBe(502);
    expect(await readJson(failed)).toEqual({ error: { message, type: "api_error", code: "upstream_error" } });
    // UPSTREAM_MAX_RETRIES=1: two attempts
    expect(fakes[upstream].requests).toHaveLength(2);
    expect(await charged()).toBe(reply.promptTokens + 2 * reply.completionTokens);
  });
});

describe("upstream 429: the provider's wording about the operator's account stays with the operator", () => {
  // OpenAI's and Anthropic's own 429 bodies: they name the operator's organization and its quota
  const OPENAI_RATE = "Rate limit reached for gpt-4 in organization org-OperatorSecret42 on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 20s.";
  const OPENAI_QUOTA = "You exceeded your current quota, please check your plan and billing details.";
  const ANTHROPIC_RATE = "This request would exceed the rate limit for your organization (5fb2b4a6-0000-4000-8000-operator0001) of 50 requests per minute.";
  const stand = rawUpstreamStand((req, res) => {
    res.writeHead(429, { "content-type": "application/json", "retry-after": "20" });
    if (req.url === "/v1/messages") {
      res.end(JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: ANTHROPIC_RATE } }));
      return;
    }
    const quota = req.headers["x-test-quota"] === "1";
    res.end(JSON.stringify({ error: { message: quota ? OPENAI_QUOTA : OPENAI_RATE, type: quota ? "insufficient_quota" : "requests", param: null, code: quota ? "insufficient_quota" : "rate_limit_exceeded" } }));
  });

  it.each([
    ["textA rate limit", "textA-4", {}],
    ["textA quota", "textA-4", { "x-test-quota": "1" }],
    ["textB rate limit", "textB-3-haiku", {}],
  ])("%s: 502 upstream_error without the upstream's message, at no cost", async (_name, model, headers) => {
    const user = await fundedUser(stand.server, 1);
    const res = await postJson(stand.server, "/v1/chat/completions", user.key, { model, messages: [{ role: "user", content: "hi" }], max_tokens: 10 }, headers);
    expect(res.status).toBe(502);
    expect(res.headers.get("retry-after")).toBe("20");
    expect(await readJson(res)).toEqual({ error: { message: "The upstream provider failed (HTTP 429): it is rate-limiting the gateway.", type: "api_error", code: "upstream_error" } });
    expect(await balanceMicros(stand.server, user.userId)).toBe(1_000_000);
  });
});

describe("upstream 401/402/403: the operator's configuration, which an SDK retry cannot change", () => {
  let calls = 0;
  let status = 401;
  const stand = rawUpstreamStand((_req, res) => {
    calls++;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "Incorrect API key provided: sk-oper****ator.", type: "invalid_request_error", param: null, code: "invalid_api_key" } }));
  });

  it.each([401, 402, 403])("HTTP %i: 502 upstream_error with x-should-retry: false, so the official SDK does not send it again", async (upstreamStatus) => {
    const user = await fundedUser(stand.server, 1);
    const client = new OpenAI({ apiKey: user.key, baseURL: `${stand.server.url}/v1`, maxRetries: 2 });
    status = upstreamStatus;
    calls = 0;
    const err = await client.chat.completions.create({ model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get("x-should-retry")).toBe("false");
    expect(calls).toBe(1);
    expect(await balanceMicros(stand.server, user.userId)).toBe(1_000_000);
  });
});

describe("a stream that is only its end marker is no answer", () => {
  // 200 event streams that end before anything was said: the end marker alone, or Anthropic's start and stop
  const stand = rawUpstreamStand((req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (req.url === "/v1/messages") {
      const start = { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-3-haiku-20240307", content: [], stop_reason: null, usage: { input_tokens: 9, output_tokens: 1 } } };
      res.end(`event: message_start\ndata: ${JSON.stringify(start)}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`);
      return;
    }
    const role = { id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4", choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] };
    res.end(req.headers["x-test-role"] === "1" ? `data: ${JSON.stringify(role)}\n\ndata: [DONE]\n\n` : "data: [DONE]\n\n");
  });

  it.each([
    ["[DONE] alone", "textA-4", {}],
    ["a role chunk, then [DONE]", "textA-4", { "x-test-role": "1" }],
    ["message_start, then message_stop", "textB-3-haiku", {}],
  ])("%s: 502 upstream_error before any output, at no cost", async (_name, model, headers) => {
    const user = await fundedUser(stand.server, 1);
    const res = await postJson(stand.server, "/v1/chat/completions", user.key, { model, messages: [{ role: "user", content: "hi" }], max_tokens: 10, stream: true }, headers);
    expect(res.status).toBe(502);
    expect(await readJson(res)).toEqual({ error: { message: "The upstream stream ended before it was complete.", type: "api_error", code: "upstream_error" } });
    expect(await balanceMicros(stand.server, user.userId)).toBe(1_000_000);
  });
});
