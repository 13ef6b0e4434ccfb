import { DEFAULT_LIMITS } from "@gw/config";
import { AppError, ManualClock } from "@gw/shared";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createRateLimits, errorCodeFor } from "./rate-limits";

const limits = { ...DEFAULT_LIMITS, status: { points: 2, duration: 60 }, loginIp: { points: 1, duration: 3600 } };
const make = () => createRateLimits({ limits, clock: new ManualClock(Date.parse("2030-01-01T00:00:00Z")), logger: pino({ level: "silent" }) });

async function refusal(run: () => Promise<unknown>): Promise<AppError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("rate limits", () => {
  it("chooses auth_rate_limit for authentication limits, rate_limit_exceeded for the rest", () => {
    expect(errorCodeFor("register")).toBe("auth_rate_limit");
    expect(errorCodeFor("loginIp")).toBe("auth_rate_limit");
    expect(errorCodeFor("loginAccount")).toBe("auth_rate_limit");
    expect(errorCodeFor("passwordReset")).toBe("auth_rate_limit");
    expect(errorCodeFor("keysCreate")).toBe("rate_limit_exceeded");
    expect(errorCodeFor("status")).toBe("rate_limit_exceeded");
  });

  it("counts per key and refuses with Retry-After, X-RateLimit-* and an ISO reset time", async () => {
    const rl = make();
    expect(await rl.consume("status", "a")).toMatchObject({ limit: 2, remaining: 1 });
    expect(await rl.consume("status", "a")).toMatchObject({ limit: 2, remaining: 0 });
    await rl.consume("status", "b");
    const err = await refusal(() => rl.consume("status", "a"));
    expect(err.code).toBe("rate_limit_exceeded");
    expect(err.status).toBe(429);
    expect(err.message).toMatch(/2030-01-01T00:01:00\.000Z|2030-01-01T00:00:59\.\d{3}Z/);
    expect(err.extras.retryAfterSeconds).toBeGreaterThanOrEqual(59);
    expect(err.extras.headers).toMatchObject({ "X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0" });
  });

  it("check refuses without counting; reset forgets", async () => {
    const rl = make();
    await rl.check("loginIp", "ip");
    await rl.check("loginIp", "ip");
    await rl.consume("loginIp", "ip");
    const err = await refusal(() => rl.check("loginIp", "ip"));
    expect(err.code).toBe("auth_rate_limit");
    expect(err.extras.retryAfterSeconds).toBeGreaterThan(3500);
    await rl.reset("loginIp", "ip");
    await rl.check("loginIp", "ip");
    await rl.consume("loginIp", "ip");
  });

  it("refund gives one counted hit back, and adds nothing to a key with no hits", async () => {
    const rl = make();
    await rl.consume("status", "a");
    await rl.consume("status", "a");
    await rl.refund("status", "a");
    expect(await rl.consume("status", "a")).toMatchObject({ remaining: 0 });
    await rl.refund("status", "fresh");
    await rl.consume("status", "fresh");
    await rl.consume("status", "fresh");
    expect((await refusal(() => rl.consume("status", "fresh"))).status).toBe(429);
  });
});
