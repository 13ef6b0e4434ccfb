import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support/fake-upstreams/index";
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
