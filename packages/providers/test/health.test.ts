// checkHealth against the fakes: healthy, failing, hanging and unconfigured providers.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_KEYS } from "@gw/test-support";
import { createProviderGateway } from "../src/create-provider-gateway";
import { startProviderHarness, type ProviderHarness } from "./helpers";

let h: ProviderHarness;

beforeAll(async () => { h = await startProviderHarness(); });
afterAll(async () => { await h.close(); });
beforeEach(() => { h.fakes.clearAll(); });

describe("checkHealth", () => {
  it("reports healthy providers with their response time", async () => {
    // A generous timeout: "degraded" means slower than half of it, and a loaded CI machine can take 200 ms.
    const text = await h.gateway.checkHealth("text", 5_000);
    expect(text.status).toBe("healthy");
    expect(text.responseTimeMs).toBeGreaterThanOrEqual(0);
    expect(h.fakes.textA.lastRequest()?.path).toBe("/v1/models");
    expect((await h.gateway.checkHealth("speech", 5_000)).status).toBe("healthy");
    expect(h.fakes.speech.lastRequest()?.path).toBe("/v1/voices");
  });

  it("reports a failing provider as unhealthy, without retrying", async () => {
    h.fakes.speech.failStatus(1, 503);
    const report = await h.gateway.checkHealth("speech", 400);
    expect(report).toMatchObject({ status: "unhealthy", issue: "HTTP 503" });
    expect(h.fakes.speech.requests).toHaveLength(1);
  });

  it("probes every configured text provider: one failing is degraded and named, all failing is unhealthy", async () => {
    h.fakes.textB.failStatus(1, 500);
    expect(await h.gateway.checkHealth("text", 2_000)).toMatchObject({ status: "degraded", issue: "textB: HTTP 500" });
    expect([h.fakes.textA, h.fakes.textB, h.fakes.textC].map((f) => f.lastRequest()?.path)).toEqual(["/v1/models", "/v1/models", "/v1/models"]);
    for (const fake of [h.fakes.textA, h.fakes.textB, h.fakes.textC]) fake.failStatus(1, 503);
    expect(await h.gateway.checkHealth("text", 2_000)).toMatchObject({ status: "unhealthy", issue: "textA: HTTP 503; textB: HTTP 503; textC: HTTP 503" });
  });

  it("reports a hanging provider as unhealthy within the timeout", async () => {
    h.fakes.speech.failNext(1, { kind: "hang" });
    const started = performance.now();
    const report = await h.gateway.checkHealth("speech", 200);
    expect(report).toMatchObject({ status: "unhealthy", issue: "timed out" });
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it("reports a slow provider as degraded", async () => {
    h.fakes.textA.latencyMs = 300;
    expect((await h.gateway.checkHealth("text", 500)).status).toBe("degraded");
  });

  it("reports an unconfigured provider as unknown", async () => {
    const gateway = createProviderGateway({ ...h.config, providers: { ...h.config.providers, speech: {} } });
    try {
      expect(await gateway.checkHealth("speech", 200)).toMatchObject({ status: "unknown" });
    } finally {
      await gateway.close();
    }
  });

  it("probes a model's own upstream and key from the models config, its provider's base URL unset or not", async () => {
    const models = h.config.models.map((m) => {
      // textC's provider is unset: only the model's own upstream serves it
      if (m.id === "textC-8x7b") return { ...m, baseUrl: `${h.fakes.textC.url}/v1`, apiKey: FAKE_KEYS.textC };
      // a second account on textA's host, whose key that host refuses
      if (m.id === "textA-4-32k") return { ...m, apiKey: "second-textA" };
      return m;
    });
    const gateway = createProviderGateway({ ...h.config, providers: { ...h.config.providers, textB: {}, textC: {} }, models });
    try {
      expect(await gateway.checkHealth("text", 5_000)).toMatchObject({ status: "degraded", issue: "textA (textA-4-32k): HTTP 401" });
      expect(h.fakes.textC.requests.map((r) => [r.path, r.headers.authorization])).toEqual([["/v1/models", `Bearer ${FAKE_KEYS.textC}`]]);
      expect(h.fakes.textA.requests.map((r) => r.headers.authorization).sort()).toEqual([`Bearer ${FAKE_KEYS.textA}`, "Bearer second-textA"]);
      h.fakes.textC.failStatus(1, 503);
      expect(await gateway.checkHealth("text", 5_000)).toMatchObject({ status: "degraded", issue: "textA (textA-4-32k): HTTP 401; textC (textC-8x7b): HTTP 503" });
    } finally {
      await gateway.close();
    }
  });
});
