import { loadConfig, type Config, type ModelDefinition } from "@gw/config";
import { AppError, Cancellation, ManualClock } from "@gw/shared";
import { describe, expect, it } from "vitest";
import { markFailure } from "../http/failure-marks";
import type { ChatStreamEvent } from "../types";
import { COOLDOWN_FIRST_MS, COOLDOWN_MAX_MS } from "./deployment-health";
import { Router } from "./router";
import { chooseWeighted, seededRandom } from "./weighted-choice";

const deployment = (id: string, weight = 1, extra: Record<string, unknown> = {}) => ({ id, baseUrl: `https://${id}.example.com`, apiKey: `key-${id}`, weight, ...extra });

function configWith(models: ModelDefinition[]): Config {
  const base = loadConfig({ NODE_ENV: "test", SESSION_SECRET: "x".repeat(40), TEXTB_BASE_URL: "https://textb.example.com" });
  return { ...base, models: base.models.map((m) => models.find((o) => o.id === m.id) ?? m) };
}

const textA4 = (extra: Partial<ModelDefinition>): ModelDefinition => {
  const base = loadConfig({ NODE_ENV: "test", SESSION_SECRET: "x".repeat(40) }).models.find((m) => m.id === "textA-4");
  if (!base) throw new Error("textA-4 missing");
  return { ...base, ...extra };
};

const failure = (status: number | "connection") => markFailure(new AppError("upstream_error", "boom"), status);

function harness(model: ModelDefinition, seed = 1) {
  const clock = new ManualClock(1_000_000);
  const router = new Router(configWith([model]), { clock, random: seededRandom(seed) });
  const config = configWith([model]);
  const target = config.models.find((m) => m.id === model.id) ?? model;
  const signal = new Cancellation();
  /** one call; `fail` decides, per deployment the call reaches, whether (and how) it fails */
  const call = (fail: (deployment: string) => AppError | undefined, withFallbacks = true) => {
    const reached: string[] = [];
    /** per attempt: may the upstream client retry it on its deployment */
    const retried: boolean[] = [];
    const promise = router.call(target, signal, withFallbacks, async (bound, retries) => {
      const endpoint = router.endpointFor(bound);
      const name = new URL(endpoint.baseUrl).hostname.split(".")[0] ?? "";
      reached.push(name);
      retried.push(retries);
      const err = fail(name);
      if (err) throw err;
      return { upstreamModel: bound.upstreamModel };
    });
    return { promise, reached, retried };
  };
  return { clock, router, call, target, signal };
}

describe("weighted choice", () => {
  it("spreads picks by weight within 2% over 20,000 seeded picks", () => {
    const items = [{ id: "a", weight: 1 }, { id: "b", weight: 3 }, { id: "c", weight: 6 }];
    const random = seededRandom(42);
    const counts = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const picked = chooseWeighted(items, random)?.id ?? "";
      counts.set(picked, (counts.get(picked) ?? 0) + 1);
    }
    expect((counts.get("a") ?? 0) / 20_000).toBeCloseTo(0.1, 1);
    expect(Math.abs((counts.get("b") ?? 0) / 20_000 - 0.3)).toBeLessThan(0.02);
    expect(Math.abs((counts.get("c") ?? 0) / 20_000 - 0.6)).toBeLessThan(0.02);
    expect(chooseWeighted([], random)).toBeUndefined();
  });
});

describe("Router", () => {
  it("sends each deployment its own key, base URL and upstream model name", async () => {
    const h = harness(textA4({ deployments: [deployment("one", 1, { upstreamModel: "gpt-4o" })] }));
    const { promise } = h.call(() => undefined);
    const result = await promise;
    expect(result.upstreamModel).toBe("gpt-4o");
    expect(result.served).toMatchObject({ deploymentId: "one", provider: "textA" });
    expect(result.served.model.id).toBe("textA-4");
  });

  it("moves on 429, 5xx and connection errors, cooling the failed one down; never on a 400", async () => {
    const h = harness(textA4({ deployments: [deployment("one"), deployment("two"), deployment("three")] }));
    for (const cause of [429, 500, 503, "connection"] as const) {
      const down = new Set<string>();
      const { promise, reached, retried } = h.call((name) => {
        if (down.size < 2 && !down.has(name)) {
          down.add(name);
          return failure(cause);
        }
        return undefined;
      });
      const result = await promise;
      // two failed, the third served: three attempts, one answer; only the last one may be retried on its deployment
      expect(reached).toHaveLength(3);
      expect(result.served.deploymentId).toBe(reached[2]);
      expect(retried).toEqual([false, false, true]);
      h.clock.advance(COOLDOWN_MAX_MS);
    }
    const { promise, reached } = h.call(() => new AppError("invalid_parameter", "bad field"));
    await expect(promise).rejects.toMatchObject({ code: "invalid_parameter" });
    expect(reached).toHaveLength(1);
  });

  it("skips a cooling deployment until its cooldown ends: 5 s, doubling to 5 min, reset by a success", async () => {
    const h = harness(textA4({ deployments: [deployment("bad"), deployment("good")] }));
    let badFails = true;
    const fail = (name: string) => (name === "bad" && badFails ? failure(503) : undefined);
    // until "bad" is tried once, it may be chosen; once it fails it cools down
    while (!h.router.states().some((s) => s.deployment === "bad" && s.status === "cooling_down")) await h.call(fail).promise;
    const cooledAt = h.clock.now();
    expect(h.router.states().find((s) => s.deployment === "bad")?.coolingUntil).toBe(new Date(cooledAt + COOLDOWN_FIRST_MS).toISOString());
    for (let i = 0; i < 20; i++) {
      const { promise, reached } = h.call(fail);
      await promise;
      expect(reached).toEqual(["good"]);
    }
    // each failure after a cooldown doubles the next one
    let expected = COOLDOWN_FIRST_MS;
    for (let round = 0; round < 8; round++) {
      h.clock.advance(expected);
      while (h.router.states().find((s) => s.deployment === "bad")?.status !== "cooling_down") await h.call(fail).promise;
      expected = Math.min(COOLDOWN_MAX_MS, expected * 2);
      expect(Date.parse(h.router.states().find((s) => s.deployment === "bad")?.coolingUntil ?? "")).toBe(h.clock.now() + expected);
    }
    expect(expected).toBe(COOLDOWN_MAX_MS);
    // recovered: a success resets the backoff
    badFails = false;
    h.clock.advance(COOLDOWN_MAX_MS);
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) seen.add((await h.call(fail).promise).served.deploymentId);
    expect(seen).toEqual(new Set(["bad", "good"]));
    badFails = true;
    while (h.router.states().find((s) => s.deployment === "bad")?.status !== "cooling_down") await h.call(fail).promise;
    expect(Date.parse(h.router.states().find((s) => s.deployment === "bad")?.coolingUntil ?? "")).toBe(h.clock.now() + COOLDOWN_FIRST_MS);
  });

  it("skips a deployment at its requests per minute like a cooling one, and refuses when all are", async () => {
    const h = harness(textA4({ deployments: [deployment("small", 100, { requestsPerMinute: 2 }), deployment("big", 1, { requestsPerMinute: 3 })] }));
    const served: string[] = [];
    for (let i = 0; i < 5; i++) served.push((await h.call(() => undefined).promise).served.deploymentId);
    expect(served.filter((d) => d === "small")).toHaveLength(2);
    expect(served.filter((d) => d === "big")).toHaveLength(3);
    expect(h.router.states().filter((s) => s.model === "textA-4").map((s) => s.status)).toEqual(["rate_limited", "rate_limited"]);
    const { promise, reached } = h.call(() => undefined);
    await expect(promise).rejects.toMatchObject({ code: "upstream_error", extras: { retryAfterSeconds: 60 } });
    expect(reached).toEqual([]);
    h.clock.advance(60_000);
    expect((await h.call(() => undefined).promise).served.deploymentId).toBe("small");
  });

  it("falls back to the next model when every deployment failed, and names it as the one that served", async () => {
    const h = harness(textA4({ deployments: [deployment("one"), deployment("two")], fallbacks: ["textB-3-haiku"] }));
    const { promise, reached } = h.call((name) => (name === "textb" ? undefined : failure(502)));
    const result = await promise;
    expect(reached.slice(0, 2).sort()).toEqual(["one", "two"]);
    expect(reached[2]).toBe("textb");
    expect(result.served).toMatchObject({ deploymentId: "default", provider: "textB" });
    expect(result.served.model.id).toBe("textB-3-haiku");
    // without fallbacks (images, speech) the last failure is the answer
    h.clock.advance(COOLDOWN_MAX_MS);
    await expect(h.call(() => failure(500), false).promise).rejects.toMatchObject({ code: "upstream_error" });
    expect(h.router.chain(h.target).map((m) => m.id)).toEqual(["textA-4", "textB-3-haiku"]);
  });

  it("skips a fallback whose upstream is not configured", async () => {
    const h = harness(textA4({ deployments: [deployment("one")], fallbacks: ["textC-8x7b", "textB-3-haiku"] }));
    const { promise, reached } = h.call((name) => (name === "textb" ? undefined : failure(500)));
    expect((await promise).served.model.id).toBe("textB-3-haiku");
    expect(reached).toEqual(["one", "textb"]);
  });

  it("tries cooling deployments anyway when nothing else can serve", async () => {
    const h = harness(textA4({ deployments: [deployment("one"), deployment("two")] }));
    await expect(h.call(() => failure(500)).promise).rejects.toMatchObject({ code: "upstream_error" });
    const { promise, reached } = h.call(() => undefined);
    await promise;
    expect(reached).toHaveLength(1);
  });

  it("reads an upstream 404 as a model name the provider does not know: 502 naming upstreamModel, no other deployment", async () => {
    const h = harness(textA4({ deployments: [deployment("one", 1, { upstreamModel: "gpt-nope" }), deployment("two", 1, { upstreamModel: "gpt-nope" })] }));
    const { promise, reached } = h.call(() => failure(404));
    const err = await promise.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "upstream_error", extras: { headers: { "x-should-retry": "false" } } });
    expect((err as AppError).message).toMatch(/'gpt-nope'.*`upstreamModel` of deployment '(one|two)' of model 'textA-4'/);
    expect(reached).toHaveLength(1);
    expect(h.router.states().filter((s) => s.model === "textA-4").map((s) => s.status)).toEqual(["healthy", "healthy"]);
  });

  it("moves a stream only before its first event; after that the failure is the caller's, with nothing sent again", async () => {
    const h = harness(textA4({ deployments: [deployment("one"), deployment("two")] }));
    const reached: string[] = [];
    const events = (failBefore: boolean) => h.router.stream(h.target, h.signal, (bound) => {
      const name = new URL(h.router.endpointFor(bound).baseUrl).hostname.split(".")[0] ?? "";
      reached.push(name);
      return (async function* (): AsyncGenerator<ChatStreamEvent> {
        if (failBefore && reached.length === 1) throw failure(503);
        yield { type: "delta", content: "hi" };
        if (!failBefore) throw failure(503);
        yield { type: "done", finishReason: "stop", usage: { promptTokens: 1, completionTokens: 1 } };
      })();
    });
    const got: ChatStreamEvent[] = [];
    for await (const event of events(true)) got.push(event);
    expect(reached).toHaveLength(2);
    expect(got.map((e) => e.served?.deploymentId)).toEqual([reached[1], reached[1]]);
    h.clock.advance(COOLDOWN_MAX_MS);
    reached.length = 0;
    const after: ChatStreamEvent[] = [];
    await expect((async () => { for await (const event of events(false)) after.push(event); })()).rejects.toMatchObject({ code: "upstream_error" });
    expect(after).toHaveLength(1);
    expect(reached).toHaveLength(1);
  });
});
