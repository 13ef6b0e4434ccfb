import { DEFAULT_PLANS } from "@gw/config";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, credit, postJson, readJson } from "./support/gateway-fixtures";
import { sessionOf, useStandInSessions } from "./support/stand-in-sessions";

// CONTRACT 10: the key's controls refused on every model endpoint, in order, with their codes; the spend limit held
// with the credits; its periods reset at 00:00 UTC (weeks on Monday).

const chat = (model = "textA-4") => ({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 10 });
const IMAGE = { prompt: "a kite" };
/** imageA costs $0.10 a call, held and charged alike */
const IMAGE_MICROS = 100_000;

describe("key controls enforced on the model routes (CONTRACT 10)", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  let users = 0;

  /** A funded user's key with these controls, created over the API. */
  const keyWith = async (controls: Record<string, unknown>, dollars = 5): Promise<{ id: string; key: string; userId: string }> => {
    const userId = `usr_enf${(users += 1)}`;
    const res = await fetch(`${server.url}/api/keys`, {
      method: "POST", headers: { ...sessionOf(userId), "content-type": "application/json" }, body: JSON.stringify({ name: "agent", ...controls }),
    });
    const body = await readJson(res);
    expect(res.status, JSON.stringify(body)).toBe(201);
    await credit(server, userId, dollars);
    return { id: body.id, key: body.key, userId };
  };
  const patch = async (userId: string, id: string, controls: Record<string, unknown>) => {
    const res = await fetch(`${server.url}/api/keys/${id}`, {
      method: "PATCH", headers: { ...sessionOf(userId), "content-type": "application/json" }, body: JSON.stringify(controls),
    });
    expect(res.status).toBe(200);
  };
  const errorOf = async (res: Response) => (await readJson(res)).error;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 1000, concurrentRequests: 100 } : p));
    server = await startTestServer({ env: fakes.env, config: { plans } });
    useStandInSessions(server);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  it("an expired key: 401 key_expired on every route, also with every other control violated", async () => {
    const { key, userId, id } = await keyWith({ expires_at: new Date(server.clock.now() + 60_000).toISOString() });
    expect((await postJson(server, "/v1/chat/completions", key, chat())).status).toBe(200);
    await patch(userId, id, { allowed_ips: ["10.0.0.0/8"], allowed_models: ["textB-3-opus"], limit: 0.01 });
    server.clock.advance(60_000);
    for (const [path, body] of [["/v1/chat/completions", chat()], ["/api/v1/imageA/generate", IMAGE], ["/v1/embeddings", { model: "text-embedding-ada-002", input: "x" }]] as const) {
      const res = await postJson(server, path, key, body);
      expect(res.status).toBe(401);
      expect(await errorOf(res)).toEqual({ code: "key_expired", type: "authentication_error", message: expect.stringContaining("expired") });
    }
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    expect((await fetch(`${server.url}/api/v1/key`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
  });

  it("allowed_ips: 403 ip_not_allowed from another address (before the model check); allowed from a listed one", async () => {
    const refused = await keyWith({ allowed_ips: ["10.0.0.0/8", "2001:db8::/32"], allowed_models: ["textB-3-opus"] });
    const res = await postJson(server, "/v1/chat/completions", refused.key, chat());
    expect(res.status).toBe(403);
    expect(await errorOf(res)).toMatchObject({ code: "ip_not_allowed", type: "permission_error" });
    const allowed = await keyWith({ allowed_ips: ["127.0.0.0/24"] });
    expect((await postJson(server, "/v1/chat/completions", allowed.key, chat())).status).toBe(200);
  });

  it("allowed_models: 403 model_not_allowed naming the model on every model route; nothing charged", async () => {
    const { key, userId } = await keyWith({ allowed_models: ["textA-4"] });
    for (const [path, body, model] of [
      ["/v1/chat/completions", chat("textA-4-turbo"), "textA-4-turbo"],
      ["/v1/completions", { model: "textA-4-32k", prompt: "x" }, "textA-4-32k"],
      ["/v1/embeddings", { model: "text-embedding-ada-002", input: "x" }, "text-embedding-ada-002"],
      ["/api/v1/imageA/generate", IMAGE, "imageA"],
      ["/api/v1/imageB.1", { prompt: "x", model: "imageB-1-dev" }, "imageB-1-dev"],
      ["/api/v1/task", { model: "speechvendor-tts", text: "hi" }, "speechvendor-tts"],
    ] as const) {
      const res = await postJson(server, path, key, body);
      expect(res.status, path).toBe(403);
      const error = await errorOf(res);
      expect(error).toMatchObject({ code: "model_not_allowed", type: "permission_error" });
      expect(error.message).toContain(`'${model}'`);
    }
    expect((await postJson(server, "/v1/chat/completions", key, chat("textA-4"))).status).toBe(200);
    expect((await postJson(server, "/v1/chat/completions", key, { ...chat("textA-4"), stream: true })).status).toBe(200);
    await server.app.context.ledger.flushCharges(userId);
  });

  it("the key's rate limit: 429 rate_limit_exceeded after its requests per minute, its headers shown as the stricter; the model check comes first", async () => {
    const { key } = await keyWith({ rate_limit: { requests_per_minute: 2, concurrent_requests: 2 }, allowed_models: ["textA-4"] });
    for (let i = 0; i < 2; i++) {
      const ok = await postJson(server, "/v1/chat/completions", key, chat());
      expect(ok.status).toBe(200);
      expect(ok.headers.get("x-ratelimit-limit")).toBe("2");
      expect(ok.headers.get("x-ratelimit-remaining")).toBe(String(1 - i));
    }
    const notAllowed = await postJson(server, "/v1/chat/completions", key, chat("textA-4-turbo"));
    expect(notAllowed.status).toBe(403);
    const limited = await postJson(server, "/v1/chat/completions", key, chat());
    expect(limited.status).toBe(429);
    expect(await errorOf(limited)).toMatchObject({ code: "rate_limit_exceeded", type: "rate_limit_error", message: expect.stringContaining("this API key") });
    expect(limited.headers.get("x-ratelimit-limit")).toBe("2");
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("the key's limit: 402 key_limit_exceeded with limit_remaining and required_amount once K holds are spent; only the key's spend counts", async () => {
    const { key, userId, id } = await keyWith({ limit: 0.25 });
    for (let i = 0; i < 2; i++) expect((await postJson(server, "/api/v1/imageA/generate", key, IMAGE)).status).toBe(200);
    const refused = await postJson(server, "/api/v1/imageA/generate", key, IMAGE);
    expect(refused.status).toBe(402);
    expect(await errorOf(refused)).toEqual({
      code: "key_limit_exceeded", type: "insufficient_credits_error", message: expect.stringContaining("limit"), limit_remaining: 0.05, required_amount: 0.1,
    });
    expect(await balanceMicros(server, userId)).toBe(5_000_000 - 2 * IMAGE_MICROS);
    const shown = await readJson(await fetch(`${server.url}/api/keys/${id}`, { headers: sessionOf(userId) }));
    expect(shown).toMatchObject({ limit: 0.25, limit_remaining: 0.05, usage: { spent_period: 0.2, spent_total: 0.2, requests_total: 2 } });
    // raising the limit takes effect at once (the cached key is evicted)
    await patch(userId, id, { limit: 0.3 });
    expect((await postJson(server, "/api/v1/imageA/generate", key, IMAGE)).status).toBe(200);
    expect((await postJson(server, "/api/v1/imageA/generate", key, IMAGE)).status).toBe(402);
  });

  it("a streamed answer under a limit: its hold is settled to the real charge, which the key's spend shows", async () => {
    const { key, id, userId } = await keyWith({ limit: 0.01 });
    const res = await postJson(server, "/v1/chat/completions", key, { ...chat(), stream: true });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("[DONE]");
    // the settle follows the last chunk
    await vi.waitFor(async () => {
      const charged = 5_000_000 - (await balanceMicros(server, userId));
      expect(charged).toBeGreaterThan(0);
      const shown = await readJson(await fetch(`${server.url}/api/keys/${id}`, { headers: sessionOf(userId) }));
      expect(shown).toMatchObject({ limit_remaining: (10_000 - charged) / 1_000_000, usage: { spent_period: charged / 1_000_000, requests_total: 1 } });
    }, { timeout: 5000, interval: 50 });
  });

  it("a failed request gives its hold on the key's limit back", async () => {
    const { key, userId } = await keyWith({ limit: 0.1 });
    fakes.imageA.failStatus(5, 500);
    expect((await postJson(server, "/api/v1/imageA/generate", key, IMAGE)).status).toBe(502);
    fakes.clearAll();
    expect((await postJson(server, "/api/v1/imageA/generate", key, IMAGE)).status).toBe(200);
    expect(await balanceMicros(server, userId)).toBe(5_000_000 - IMAGE_MICROS);
  });

  it("insufficient credits under the key's limit: 402 insufficient_credits, and the key's hold is given back", async () => {
    const { key, id, userId } = await keyWith({ limit: 1 }, 0.1);
    expect((await postJson(server, "/api/v1/imageA/generate", key, IMAGE)).status).toBe(200);
    const refused = await postJson(server, "/api/v1/imageA/generate", key, IMAGE);
    expect(refused.status).toBe(402);
    expect((await errorOf(refused)).code).toBe("insufficient_credits");
    const shown = await readJson(await fetch(`${server.url}/api/keys/${id}`, { headers: sessionOf(userId) }));
    expect(shown.limit_remaining).toBe(0.9);
  });

  it("a limit set on a key in use counts what it already spent in the period", async () => {
    const { key, id, userId } = await keyWith({});
    expect((await postJson(server, "/api/v1/imageA/generate", key, IMAGE)).status).toBe(200);
    await patch(userId, id, { limit: 0.15 });
    expect((await postJson(server, "/api/v1/imageA/generate", key, IMAGE)).status).toBe(402);
  });
});

describe("key limit periods reset at 00:00 UTC (CONTRACT 10)", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    server = await startTestServer({ env: fakes.env });
    useStandInSessions(server);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  const spendUntilRefused = async (key: string): Promise<number> => {
    let ok = 0;
    for (;;) {
      const res = await postJson(server, "/api/v1/imageA/generate", key, IMAGE);
      if (res.status !== 200) {
        expect(res.status).toBe(402);
        return ok;
      }
      ok += 1;
    }
  };

  it.each([
    // [reset, the period, its last second]
    ["daily", "a day", Date.UTC(2031, 2, 4, 23, 59, 59)],
    ["weekly", "a week (Sunday to Monday)", Date.UTC(2031, 2, 9, 23, 59, 59)],
    ["monthly", "a month", Date.UTC(2031, 3, 30, 23, 59, 59)],
  ] as const)("%s: the limit is spent until %s ends, then new", async (reset, _period, lastSecond) => {
    const userId = `usr_period_${reset}`;
    server.clock.set(Math.max(server.clock.now(), lastSecond - 3_600_000));
    const res = await fetch(`${server.url}/api/keys`, {
      method: "POST", headers: { ...sessionOf(userId), "content-type": "application/json" }, body: JSON.stringify({ name: reset, limit: 0.2, limit_reset: reset }),
    });
    const { key, id } = await readJson(res);
    await credit(server, userId, 5);
    expect(await spendUntilRefused(key)).toBe(2);
    server.clock.set(lastSecond);
    expect(await spendUntilRefused(key)).toBe(0);
    server.clock.set(lastSecond + 1000);
    expect(await spendUntilRefused(key)).toBe(2);
    const shown = await readJson(await fetch(`${server.url}/api/keys/${id}`, { headers: sessionOf(userId) }));
    expect(shown.usage).toEqual({ spent_period: 0.2, spent_total: 0.4, requests_total: 4 });
  });
});
