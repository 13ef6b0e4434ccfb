import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { LimitRule } from "@gw/config";
import { AppError } from "@gw/shared";

/**
 * Per-account login throttling (CONTRACT 2): failed logins on one account are counted; once the window's budget is
 * spent every attempt on that account waits for the window to pass (429 + Retry-After), then it is open again, so
 * the owner is never locked out for good. Successful logins do not count.
 */
export interface LoginThrottle {
  /** throws auth_rate_limit while the account is cooling down */
  assertAllowed(email: string): Promise<void>;
  recordFailure(email: string): Promise<void>;
}

const throttled = (ms: number) =>
  new AppError("auth_rate_limit", "Too many failed login attempts for this account. Please try again later.", {
    retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)),
  });

// e-mail addresses do not appear in limiter keys (Redis is shared infrastructure)
const keyOf = (email: string): string => createHash("sha256").update(email).digest("hex").slice(0, 32);

export function createLoginThrottle(rule: LimitRule, redis?: Redis): LoginThrottle {
  const options = { keyPrefix: "gw:login-fail", points: rule.points, duration: rule.duration };
  const memory = new RateLimiterMemory(options);
  // With Redis the count is shared by every instance; when Redis fails the in-memory limiter takes over.
  const limiter: RateLimiterAbstract = redis
    ? new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: memory })
    : memory;

  return {
    async assertAllowed(email) {
      const res = await limiter.get(keyOf(email)).catch(() => null);
      if (res && res.consumedPoints >= rule.points) throw throttled(res.msBeforeNext);
    },
    async recordFailure(email) {
      try {
        await limiter.consume(keyOf(email));
      } catch (err) {
        if (err instanceof RateLimiterRes) return; // already over: assertAllowed refuses the next attempt
        throw err;
      }
    },
  };
}
