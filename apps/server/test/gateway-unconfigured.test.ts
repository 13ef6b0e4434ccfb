import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MODELS } from "@gw/config";
import { FAKE_KEYS, startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { authHeaders, balanceMicros, fundedUser, postJson, type FundedUser, readJson } from "./support/gateway-fixtures";

// CONTRACT 4: a model whose upstream env is unset answers 503 provider_not_configured, costs nothing, and is still listed.
describe("models whose provider is not configured", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  let user: FundedUser;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    // only textA is configured
    server = await startTestServer({ env: { TEXTA_BASE_URL: fakes.textA.url, TEXTA_API_KEY: fakes.env.TEXTA_API_KEY ?? "" } });
    user = await fundedUser(server, 5);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  const notConfigured = async (path: string, body: unknown) => {
    const before = await balanceMicros(server, user.userId);
    const res = await postJson(server, path, user.key, body);
    expect(res.status).toBe(503);
    expect(await readJson(res)).toEqual({ error: { message: expect.any(String), type: "api_error", code: "provider_not_configured" } });
    for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) expect(res.headers.get(h)).toMatch(/^\d+$/);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(await balanceMicros(server, user.userId)).toBe(before);
  };

  it("answers 503 provider_not_configured on every endpoint, free of charge", async () => {
    const messages = [{ role: "user", content: "hi" }];
    await notConfigured("/api/v1/task", { model: "textB-3-haiku", messages });
    await notConfigured("/api/v1/task", { model: "textC-8x7b", messages });
    await notConfigured("/api/v1/task", { model: "imageB-1-schnell", prompt: "a lighthouse" });
    await notConfigured("/api/v1/task", { model: "speechvendor-tts", text: "hello", voice: "Rachel" });
    await notConfigured("/api/v1/imageA/generate", { prompt: "a lighthouse" });
    await notConfigured("/api/v1/imageB.1", { prompt: "a lighthouse" });
    await notConfigured("/v1/chat/completions", { model: "textB-2", messages });
  });

  it("tells the OpenAI SDK not to retry: one request, not three, counted against the minute", async () => {
    const caller = await fundedUser(server, 1);
    const client = new OpenAI({ apiKey: caller.key, baseURL: `${server.url}/v1` }); // the SDK's default retries (2)
    const err = await client.chat.completions.create({ model: "textB-3-haiku", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err).toMatchObject({ status: 503, code: "provider_not_configured", type: "api_error" });
    const after = await fetch(`${server.url}/v1/models`, { headers: authHeaders(caller.key, false) });
    const limit = Number(after.headers.get("x-ratelimit-limit"));
    expect(Number(after.headers.get("x-ratelimit-remaining"))).toBe(limit - 2);
  });

  it("still lists those models, and serves the configured ones", async () => {
    const res = await fetch(`${server.url}/v1/models`, { headers: authHeaders(user.key, false) });
    expect(res.status).toBe(200);
    const ids = ((await readJson(res)).data as Array<{ id: string }>).map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(["textB-3-haiku", "textC-8x7b", "imageB-1-schnell", "speechvendor-tts", "textA-4"]));
    const ok = await postJson(server, "/api/v1/task", user.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 5 });
    expect(ok.status).toBe(200);
  });
});

// CONTRACT 4: the models config overrides base URL and key per model, over the provider's from the environment.
describe("a model with its own base URL and key in the models config", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  let user: FundedUser;
  let dir: string;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    dir = mkdtempSync(path.join(os.tmpdir(), "gw-models-"));
    const models = DEFAULT_MODELS.map((m) => {
      // textC's provider is not configured at all: the model's own upstream serves it, under another name and price
      if (m.id === "textC-8x7b") return { ...m, baseUrl: `${fakes.textC.url}/v1/`, apiKey: FAKE_KEYS.textC, upstreamModel: "mixtral-8x7b", pricing: { inputPer1k: 3_000, outputPer1k: 5_000 } };
      // textA is configured, this one model goes elsewhere: textA's key must not go with it
      if (m.id === "textA-3.5-turbo") return { ...m, baseUrl: fakes.textC.url, apiKey: FAKE_KEYS.textC };
      return m;
    });
    writeFileSync(path.join(dir, "models.json"), JSON.stringify({ models }));
    server = await startTestServer({ env: { TEXTA_BASE_URL: fakes.textA.url, TEXTA_API_KEY: FAKE_KEYS.textA, CONFIG_FILE: path.join(dir, "models.json") } });
    user = await fundedUser(server, 5);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is served by its own upstream with its own key, upstream name and price; the others keep their provider's", async () => {
    const before = await balanceMicros(server, user.userId);
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textC-8x7b", messages: [{ role: "user", content: "hi" }], max_tokens: 5 });
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body.model).toBe("textC-8x7b");
    const sent = fakes.textC.lastRequest();
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.headers.authorization).toBe(`Bearer ${FAKE_KEYS.textC}`);
    expect(sent?.json).toMatchObject({ model: "mixtral-8x7b" });
    const { prompt_tokens: input, completion_tokens: output } = body.usage as { prompt_tokens: number; completion_tokens: number };
    expect(before - (await balanceMicros(server, user.userId))).toBe(Math.ceil((input * 3_000) / 1000) + Math.ceil((output * 5_000) / 1000));

    const moved = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-3.5-turbo", messages: [{ role: "user", content: "hi" }], max_tokens: 5 });
    expect(moved.status).toBe(200);
    expect(fakes.textC.requests).toHaveLength(2);
    expect(fakes.textC.lastRequest()?.headers.authorization).toBe(`Bearer ${FAKE_KEYS.textC}`);
    expect(fakes.textA.requests).toHaveLength(0);

    const stayed = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 5 });
    expect(stayed.status).toBe(200);
    expect(fakes.textA.lastRequest()?.headers.authorization).toBe(`Bearer ${FAKE_KEYS.textA}`);
  });

  it("lists it without its base URL or key", async () => {
    const res = await fetch(`${server.url}/v1/models`, { headers: authHeaders(user.key, false) });
    const text = await res.text();
    expect(text).toContain("textC-8x7b");
    expect(text).not.toContain(FAKE_KEYS.textC);
    expect(text).not.toContain(fakes.textC.url);
  });
});
