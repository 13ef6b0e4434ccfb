import { ManualClock } from "@gw/shared";
import { describe, expect, it } from "vitest";
import { createHealthChecks, overallStatus, type HealthEntry } from "./health-checks";

const entry = (status: HealthEntry["status"]): HealthEntry => ({ status, response_time: 1, last_check: "" });

describe("health checks", () => {
  it("reports the standard services, unknown when unregistered", async () => {
    const checks = createHealthChecks({ clock: new ManualClock(0) });
    checks.register("database", async () => ({ status: "healthy" }));
    const report = await checks.report();
    expect(Object.keys(report.services).sort()).toEqual(["database", "payment_provider", "speech_provider", "text_provider"]);
    expect(report.services.database?.status).toBe("healthy");
    expect(report.services.text_provider).toMatchObject({ status: "unknown", response_time: 0 });
    expect(report.overall_status).toBe("healthy");
    expect(report.timestamp).toBe(new Date(0).toISOString());
  });

  it("keeps the answer of a check whose own deadline fires in the same turn as the registry's (a busy process)", async () => {
    const checks = createHealthChecks({ clock: new ManualClock(0), timeoutMs: 50 });
    // its own 50 ms timer is due with the registry's; its answer comes back a turn later, as a timed-out fetch's does
    checks.register("text_provider", () => new Promise((resolve) => {
      setTimeout(() => setImmediate(() => resolve({ status: "degraded", issue: "textB: timed out" })), 50);
    }));
    const report = await checks.report();
    expect(report.services.text_provider).toMatchObject({ status: "degraded", issue: "textB: timed out" });
  });

  it("turns a hanging check into unhealthy within its timeout", async () => {
    const checks = createHealthChecks({ clock: new ManualClock(0), timeoutMs: 50 });
    checks.register("text_provider", () => new Promise(() => undefined));
    const started = Date.now();
    const report = await checks.report();
    expect(Date.now() - started).toBeLessThan(400);
    expect(report.services.text_provider).toMatchObject({ status: "unhealthy", issue: "no answer within 50 ms" });
    expect(report.overall_status).toBe("degraded");
  });

  it("turns a throwing check into unhealthy with the reason", async () => {
    const checks = createHealthChecks({ clock: new ManualClock(0) });
    checks.register("database", async () => { throw new Error("connection refused"); });
    const report = await checks.report();
    expect(report.services.database).toMatchObject({ status: "unhealthy", issue: "connection refused" });
    expect(report.overall_status).toBe("unhealthy");
  });

  it("caches the report until the cache time passes on the injected clock", async () => {
    const clock = new ManualClock(0);
    let runs = 0;
    const checks = createHealthChecks({ clock, cacheMs: 30_000 });
    checks.register("database", async () => { runs += 1; return { status: "healthy" }; });
    await Promise.all([checks.report(), checks.report()]);
    clock.advance(29_999);
    await checks.report();
    expect(runs).toBe(1);
    clock.advance(1);
    await checks.report();
    expect(runs).toBe(2);
  });

  it("derives the overall status", () => {
    expect(overallStatus({ database: entry("healthy"), text_provider: entry("unknown") })).toBe("healthy");
    expect(overallStatus({ database: entry("healthy"), text_provider: entry("unhealthy") })).toBe("degraded");
    expect(overallStatus({ database: entry("degraded") })).toBe("degraded");
    expect(overallStatus({ database: entry("unhealthy"), text_provider: entry("healthy") })).toBe("unhealthy");
  });
});
