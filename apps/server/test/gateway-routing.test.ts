// CONTRACT 13 end to end: deployments per model, weighted choice, cooldown and recovery (on the server's ManualClock),
// retry before the first byte only, requests per minute, fallbacks billed at the model that served, an upstream 404.
// UPSTREAM_MAX_RETRIES keeps its default (2): a deployment with another to go to is still sent a request only once.
import { createServer } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_PLANS, type ModelDefinition } from "@gw/config";
import { COOLDOWN_FIRST_MS, COOLDOWN_MAX_MS, type TextUsage } from "@gw/providers";
import { FakeAnthropic, FakeOpenAi, fakeChatReply, type FakeServer } from "@gw/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson, type FundedUser } from "./support/gateway-fixtures";

/** A loopback port nothing listens on: a deployment that is down (connection refused). */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const PRICE = { inputPer1k: 1_000, outputPer1k: 2_000 };
const CHEAP = { inputPer1k: 300, outputPer1k: 700 };
const DEAR = { inputPer1k: 50_000, outputPer1k: 100_000 };
const cost = (pricing: { inputPer1k: number; outputPer1k: number }, usage: TextUsage) =>
  Math.ceil((usage.promptTokens * pricing.inputPer1k) / 1000) + Math.ceil((usage.completionTokens * pricing.outputPer1k) / 1000);

const messages = [{ role: "user", content: "one two three four five" }];

/** The calls a fake upstream was sent (not the health checks of /api/status/external, which list its models). */
const calls = (fake: FakeServer) => fake.requests.filter((r) => r.method === "POST");

/** The SSE events of a stream body, parsed (the final `[DONE]` left out). */
const events = (text: string): Array<Record<string, unknown>> => text.trim().split("\n\n").filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);

describe("routing across upstream deployments (CONTRACT 13)", () => {
  let server: TestServer;
  let dir: string;
  const fakes: FakeServer[] = [];
  const openAi = async (key: string): Promise<FakeOpenAi> => {
    const fake = await new FakeOpenAi(key).start();
    fakes.push(fake);
    return fake;
  };
  const anthropic = async (key: string): Promise<FakeAnthropic> => {
    const fake = await new FakeAnthropic(key).start();
    fakes.push(fake);
    return fake;
  };
  const d = (id: string, fake: { url: string; apiKey: string } | string, extra: Record<string, unknown> = {}) =>
    typeof fake === "string" ? { id, baseUrl: fake, apiKey: "none", ...extra } : { id, baseUrl: fake.url, apiKey: fake.apiKey, ...extra };

  // textA-4: three deployments
  let trio: FakeOpenAi[];
  // textA-3.5-turbo: a first choice (by weight) and a backup, for streams
  let primary: FakeOpenAi;
  let backup: FakeOpenAi;
  // textA-4-32k: one down, one slow, one rate-limited, one healthy
  let slow: FakeOpenAi;
  let limited: FakeOpenAi;
  let healthy: FakeOpenAi;
  // textA-4-turbo: every deployment fails; falls back on textB-3-haiku (cheaper)
  let failing: FakeOpenAi;
  let fallback: FakeAnthropic;
  // textC-8x7b: weights 1 and 3
  let light: FakeOpenAi;
  let heavy: FakeOpenAi;
  // text-davinci-003 (chat): a deployment at 2 requests per minute
  let perMinute: FakeOpenAi;
  let spare: FakeOpenAi;
  // textB-2: an upstream model name the provider does not know
  let unknownA: FakeAnthropic;
  let unknownB: FakeAnthropic;
  let user: FundedUser;

  beforeAll(async () => {
    trio = await Promise.all([openAi("key-1"), openAi("key-2"), openAi("key-3")]);
    [primary, backup, slow, limited, healthy, failing, light, heavy, perMinute, spare] = await Promise.all(
      ["key-p", "key-b", "key-slow", "key-429", "key-ok", "key-503", "key-light", "key-heavy", "key-rpm", "key-spare"].map(openAi),
    ) as [FakeOpenAi, FakeOpenAi, FakeOpenAi, FakeOpenAi, FakeOpenAi, FakeOpenAi, FakeOpenAi, FakeOpenAi, FakeOpenAi, FakeOpenAi];
    [fallback, unknownA, unknownB] = await Promise.all([anthropic("key-fallback"), anthropic("key-u1"), anthropic("key-u2")]);
    const down = await closedPortUrl();
    const models: Array<Partial<ModelDefinition> & { id: string }> = [
      { id: "textA-4", pricing: PRICE, deployments: trio.map((f, i) => d(`d${i + 1}`, f)) as ModelDefinition["deployments"] },
      { id: "textA-3.5-turbo", pricing: PRICE, deployments: [d("primary", primary, { weight: 1e9 }), d("backup", backup, { weight: 1e-9 })] as ModelDefinition["deployments"] },
      { id: "textA-4-32k", pricing: PRICE, deployments: [d("down", down), d("slow", slow), d("limited", limited), d("healthy", healthy)] as ModelDefinition["deployments"] },
      { id: "textA-4-turbo", pricing: DEAR, deployments: [d("down", down), d("failing", failing)] as ModelDefinition["deployments"], fallbacks: ["textB-3-haiku"] },
      { id: "textB-3-haiku", pricing: CHEAP, deployments: [d("anthropic", fallback)] as ModelDefinition["deployments"] },
      { id: "textC-8x22b", pricing: CHEAP, fallbacks: ["textA-4-turbo"] },
      { id: "textC-8x7b", pricing: PRICE, deployments: [d("light", light, { weight: 1 }), d("heavy", heavy, { weight: 3 })] as ModelDefinition["deployments"] },
      { id: "text-davinci-003", pricing: PRICE, deployments: [d("per-minute", perMinute, { weight: 1e9, requestsPerMinute: 2 }), d("spare", spare, { weight: 1e-9 })] as ModelDefinition["deployments"] },
      { id: "textB-2", pricing: PRICE, deployments: [d("u1", unknownA, { upstreamModel: "claude-nope" }), d("u2", unknownB, { upstreamModel: "claude-nope" })] as ModelDefinition["deployments"] },
    ];
    dir = mkdtempSync(path.join(os.tmpdir(), "gw-routing-"));
    writeFileSync(path.join(dir, "config.json"), JSON.stringify({ models }));
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 100_000, concurrentRequests: 1_000 } : p));
    server = await startTestServer({
      env: { CONFIG_FILE: path.join(dir, "config.json"), TEXTC_BASE_URL: light.url, TEXTC_API_KEY: light.apiKey, UPSTREAM_TIMEOUT_MS: "1000" },
      config: { plans },
    });
    user = await fundedUser(server, 50);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all(fakes.map((f) => f.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every deployment recovered: past the longest cooldown on the server's clock. */
  const recoverAll = () => server.clock.advance(COOLDOWN_MAX_MS + 1);

  async function settles(userId: string) {
    await server.app.context.ledger.flushCharges(userId);
    return server.app.context.ledger.entries(userId, { kinds: ["settle"], limit: 500 });
  }

  async function deploymentStates(): Promise<Array<{ model: string; deployment: string; status: string; cooling_until?: string }>> {
    const res = await fetch(`${server.url}/api/status/external`);
    expect(res.status).toBe(200);
    return (await readJson(res)).deployments;
  }

  it("a model with three deployments keeps answering while any two fail, sending one request to each and charging once", async () => {
    const payer = await fundedUser(server, 1);
    const pairs: Array<[number, number]> = [[0, 1], [0, 2], [1, 2]];
    for (const [a, b] of pairs) {
      recoverAll();
      for (const fake of trio) fake.clear();
      trio[a]?.failStatus(1, 503);
      trio[b]?.failNext(1, { kind: "reset" });
      const before = await balanceMicros(server, payer.userId);
      const res = await postJson(server, "/v1/chat/completions", payer.key, { model: "textA-4", messages, max_tokens: 20 });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-gateway-model")).toBe("textA-4");
      const body = await readJson(res);
      expect(body.model).toBe("textA-4");
      const charged = cost(PRICE, { promptTokens: body.usage.prompt_tokens, completionTokens: body.usage.completion_tokens });
      expect(Number(res.headers.get("x-request-cost"))).toBe(charged / 1e6);
      expect(before - (await balanceMicros(server, payer.userId))).toBe(charged);
      const survivor = [0, 1, 2].find((i) => i !== a && i !== b) ?? -1;
      expect(calls(trio[survivor] ?? healthy)).toHaveLength(1);
      expect(calls(trio[a] ?? healthy).length).toBeLessThanOrEqual(1);
      expect(calls(trio[b] ?? healthy).length).toBeLessThanOrEqual(1);
      const [settle] = await settles(payer.userId);
      expect(settle?.cost).toBe(charged);
      expect(settle?.meta).toMatchObject({ model: "textA-4", deployment: `d${survivor + 1}` });
    }
    expect(await settles(payer.userId)).toHaveLength(3);
    expect(await server.app.context.ledger.verify(payer.userId)).toMatchObject({ ok: true });
  });

  it("one down, one slow, one rate-limited: every request is answered and charged once; the failed ones cool down, shown without error texts", async () => {
    recoverAll();
    slow.latencyMs = 5_000;
    limited.failStatus(1_000, 429);
    const payer = await fundedUser(server, 1);
    let answered = 0;
    // until each broken deployment was tried once (each request tries them in a random order before the healthy one)
    for (let i = 0; i < 40; i++) {
      const res = await postJson(server, "/v1/chat/completions", payer.key, { model: "textA-4-32k", messages, max_tokens: 10 });
      expect(res.status).toBe(200);
      await res.text();
      answered++;
      const states = (await deploymentStates()).filter((s) => s.model === "textA-4-32k");
      if (states.filter((s) => s.status === "cooling_down").length === 3) break;
    }
    const states = (await deploymentStates()).filter((s) => s.model === "textA-4-32k");
    expect(states.map((s) => [s.deployment, s.status])).toEqual([["down", "cooling_down"], ["slow", "cooling_down"], ["limited", "cooling_down"], ["healthy", "healthy"]]);
    for (const s of states.slice(0, 3)) {
      expect(Date.parse(s.cooling_until ?? "")).toBe(server.clock.now() + COOLDOWN_FIRST_MS);
      expect(Object.keys(s).sort()).toEqual(["cooling_until", "deployment", "model", "status"]);
    }
    expect(JSON.stringify(await deploymentStates())).not.toMatch(/429|rate-limiting|could not be reached|did not answer/);
    // each broken one was sent exactly one request; the healthy one answered them all
    expect(calls(slow)).toHaveLength(1);
    expect(calls(limited)).toHaveLength(1);
    expect(calls(healthy)).toHaveLength(answered);
    expect(await settles(payer.userId)).toHaveLength(answered);
    // while they cool down, nothing goes to them
    for (let i = 0; i < 5; i++) expect((await postJson(server, "/v1/chat/completions", payer.key, { model: "textA-4-32k", messages, max_tokens: 10 })).status).toBe(200);
    expect(calls(slow).length + calls(limited).length).toBe(2);

    // recovery on the fake clock: once the cooldown ended and the upstream is well again, it serves and shows healthy
    slow.latencyMs = 0;
    limited.clear();
    server.clock.advance(COOLDOWN_FIRST_MS);
    for (let i = 0; i < 40 && calls(limited).length === 0; i++) {
      expect((await postJson(server, "/v1/chat/completions", payer.key, { model: "textA-4-32k", messages, max_tokens: 10 })).status).toBe(200);
    }
    expect(calls(limited)).toHaveLength(1);
    expect((await deploymentStates()).find((s) => s.model === "textA-4-32k" && s.deployment === "limited")?.status).toBe("healthy");
    expect(await server.app.context.ledger.verify(payer.userId)).toMatchObject({ ok: true });
  }, 60_000);

  it("a stream failing before its first byte is answered by another deployment, charged once", async () => {
    recoverAll();
    primary.clear();
    backup.clear();
    primary.failNext(1, { kind: "truncate", at: "start" });
    const payer = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/chat/completions", payer.key, { model: "textA-3.5-turbo", messages, max_tokens: 20, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-model")).toBe("textA-3.5-turbo");
    const chunks = events(await res.text());
    expect(chunks.some((c) => "error" in c)).toBe(false);
    const reply = fakeChatReply(messages, 20);
    const usage = chunks.at(-1)?.usage as { prompt_tokens: number; completion_tokens: number; cost: number };
    expect(usage).toMatchObject({ prompt_tokens: reply.promptTokens, completion_tokens: reply.completionTokens });
    const charged = cost(PRICE, { promptTokens: reply.promptTokens, completionTokens: reply.completionTokens });
    expect(usage.cost).toBe(charged / 1e6);
    expect(calls(primary)).toHaveLength(1);
    expect(calls(backup)).toHaveLength(1);
    const all = await settles(payer.userId);
    expect(all).toHaveLength(1);
    expect(all[0]?.cost).toBe(charged);
    expect(all[0]?.meta).toMatchObject({ model: "textA-3.5-turbo", deployment: "backup" });
  });

  it("a stream failing after its first byte is not sent upstream again, and is charged for what it produced", async () => {
    recoverAll();
    primary.clear();
    backup.clear();
    primary.failNext(1, { kind: "truncate", at: "half" });
    const payer = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/chat/completions", payer.key, { model: "textA-3.5-turbo", messages, max_tokens: 20, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const chunks = events(await res.text());
    expect(chunks.at(-1)).toMatchObject({ error: { code: "upstream_error" } });
    const reported = (chunks.at(-2)?.usage as { cost: number }).cost;
    expect(reported).toBeGreaterThan(0);
    expect(calls(primary)).toHaveLength(1);
    expect(calls(backup)).toHaveLength(0);
    const all = await settles(payer.userId);
    expect(all).toHaveLength(1);
    expect(all[0]?.cost).toBe(Math.round(reported * 1e6));
    expect(all[0]?.meta).toMatchObject({ model: "textA-3.5-turbo", deployment: "primary", status: "partial" });
    expect(1_000_000 - (await balanceMicros(server, payer.userId))).toBe(Math.round(reported * 1e6));
  });

  it.each([false, true])("when every deployment fails, the fallback model serves, is named by `model` and X-Gateway-Model, and is charged at its own price (stream %s)", async (stream) => {
    recoverAll();
    failing.clear();
    fallback.clear();
    failing.failStatus(1, 503);
    const payer = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/chat/completions", payer.key, { model: "textA-4-turbo", messages, max_tokens: 20, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-model")).toBe("textB-3-haiku");
    const reply = fakeChatReply(messages, 20);
    const charged = cost(CHEAP, { promptTokens: reply.promptTokens, completionTokens: reply.completionTokens });
    if (stream) {
      const chunks = events(await res.text());
      expect(chunks.every((c) => c.model === "textB-3-haiku")).toBe(true);
      expect((chunks.at(-1)?.usage as { cost: number }).cost).toBe(charged / 1e6);
    } else {
      const body = await readJson(res);
      expect(body.model).toBe("textB-3-haiku");
      expect(body.usage).toMatchObject({ prompt_tokens: reply.promptTokens, completion_tokens: reply.completionTokens });
      expect(Number(res.headers.get("x-request-cost"))).toBe(charged / 1e6);
    }
    expect(calls(failing)).toHaveLength(1);
    expect(calls(fallback)).toHaveLength(1);
    expect(1_000_000 - (await balanceMicros(server, payer.userId))).toBe(charged);
    const all = await settles(payer.userId);
    expect(all).toHaveLength(1);
    expect(all[0]?.cost).toBe(charged);
    expect(all[0]?.meta).toMatchObject({ model: "textB-3-haiku", deployment: "anthropic" });
    const usage = await readJson(await fetch(`${server.url}/api/usage`, { headers: { authorization: `Bearer ${payer.key}` } }));
    expect(usage.data[0]).toMatchObject({ model: "textB-3-haiku", deployment: "anthropic", cost: charged / 1e6 });
  });

  it("the hold covers the dearest model of the chain: a balance enough for the model but not its fallback is refused, nothing sent", async () => {
    light.clear();
    const payer = await fundedUser(server, 0.01);
    const res = await postJson(server, "/v1/chat/completions", payer.key, { model: "textC-8x22b", messages, max_tokens: 1000 });
    expect(res.status).toBe(402);
    const body = await readJson(res);
    expect(body.error.code).toBe("insufficient_credits");
    // at textA-4-turbo's price: 1000 completion tokens alone are 0.1 USD
    expect(body.error.required_amount).toBeGreaterThan(0.1);
    expect(calls(light)).toHaveLength(0);
    expect(await balanceMicros(server, payer.userId)).toBe(10_000);
  });

  it("spreads requests by weight (1:3) within tolerance", async () => {
    light.clear();
    heavy.clear();
    const total = 240;
    for (let sent = 0; sent < total; sent += 24) {
      const batch = await Promise.all(Array.from({ length: 24 }, () => postJson(server, "/v1/chat/completions", user.key, { model: "textC-8x7b", messages, max_tokens: 2 })));
      for (const res of batch) {
        expect(res.status).toBe(200);
        await res.text();
      }
    }
    expect(calls(light).length + calls(heavy).length).toBe(total);
    // 3.5 standard deviations of a binomial(240, 0.75) around its mean
    expect(Math.abs(calls(heavy).length / total - 0.75)).toBeLessThan(0.1);
  }, 60_000);

  it("respects a deployment's requests per minute: at it, it is skipped like a cooling one, and serves again after the minute", async () => {
    perMinute.clear();
    spare.clear();
    for (let i = 0; i < 4; i++) {
      const res = await postJson(server, "/v1/chat/completions", user.key, { model: "text-davinci-003", messages, max_tokens: 2 });
      expect(res.status).toBe(200);
      await res.text();
    }
    expect(calls(perMinute)).toHaveLength(2);
    expect(calls(spare)).toHaveLength(2);
    expect((await deploymentStates()).find((s) => s.model === "text-davinci-003" && s.deployment === "per-minute")?.status).toBe("rate_limited");
    server.clock.advance(60_000);
    expect((await postJson(server, "/v1/chat/completions", user.key, { model: "text-davinci-003", messages, max_tokens: 2 })).status).toBe(200);
    expect(calls(perMinute)).toHaveLength(3);
  });

  it("an upstream 404 (a model name it does not know) is 502 with x-should-retry: false naming upstreamModel; no other deployment is tried, nothing charged", async () => {
    unknownA.failStatus(1, 404);
    unknownB.failStatus(1, 404);
    const payer = await fundedUser(server, 1);
    const res = await postJson(server, "/v1/chat/completions", payer.key, { model: "textB-2", messages, max_tokens: 10 });
    expect(res.status).toBe(502);
    expect(res.headers.get("x-should-retry")).toBe("false");
    const body = await readJson(res);
    expect(body.error.code).toBe("upstream_error");
    expect(body.error.message).toContain("'claude-nope'");
    expect(body.error.message).toContain("`upstreamModel`");
    expect(calls(unknownA).length + calls(unknownB).length).toBe(1);
    expect(await balanceMicros(server, payer.userId)).toBe(1_000_000);
  });
});
