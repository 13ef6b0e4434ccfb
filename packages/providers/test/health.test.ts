// checkHealth against the fakes: healthy, failing, hanging and unconfigured providers.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
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
    h.fakes.textA.failStatus(1, 503);
    const report = await h.gateway.checkHealth("text", 400);
    expect(report).toMatchObject({ status: "unhealthy", issue: "HTTP 503" });
    expect(h.fakes.textA.requests).toHaveLength(1);
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
});
