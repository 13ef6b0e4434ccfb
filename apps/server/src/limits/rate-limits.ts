import type { LimitName, LimitRule } from "@gw/config";
import { AppError, type Clock, type ErrorCode } from "@gw/shared";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { RateLimitState, RateLimits } from "@gw/api/app-context";

/** Authentication attempts answer auth_rate_limit (SPEC 7.2); every other limit rate_limit_exceeded. */
const AUTH_LIMITS: ReadonlySet<LimitName> = new Set<LimitName>(["register", "loginIp", "loginAccount", "passwordReset"]);

export function errorCodeFor(name: LimitName): ErrorCode {
  return AUTH_LIMITS.has(name) ? "auth_rate_limit" : "rate_limit_exceeded";
}

export interface RateLimitsOptions {
  limits: Record<LimitName, LimitRule>;
  clock: Clock;
  logger: Logger;
  /** with Redis, counters are shared by every instance */
  redis?: Redis;
}

function createLimiter(name: LimitName, rule: LimitRule, redis: Redis | undefined): RateLimiterAbstract {
  const base = { keyPrefix: `rl:${name}`, points: rule.points, duration: rule.duration };
  if (!redis) return new RateLimiterMemory(base);
  // Fallback (documented): while Redis is unreachable each instance counts in memory, so limits stay enforced
  // per instance instead of failing open or failing every request.
  return new RateLimiterRedis({
    ...base,
    storeClient: redis,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory(base),
  });
}

const stateOf = (rule: LimitRule, res: RateLimiterRes, now: number): RateLimitState => ({
  limit: rule.points,
  remaining: Math.max(0, res.remainingPoints),
  resetAt: now + res.msBeforeNext,
});

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(state.limit),
    "X-RateLimit-Remaining": String(state.remaining),
    "X-RateLimit-Reset": String(Math.ceil(state.resetAt / 1000)),
  };
}

/** One rate-limit service for the whole app (SPEC 8), keyed by the names of config.limits. */
export function createRateLimits(options: RateLimitsOptions): RateLimits {
  const limiters = new Map<LimitName, RateLimiterAbstract>();
  const limiter = (name: LimitName): RateLimiterAbstract => {
    let found = limiters.get(name);
    if (!found) {
      found = createLimiter(name, options.limits[name], options.redis);
      limiters.set(name, found);
    }
    return found;
  };

  const refusal = (name: LimitName, res: RateLimiterRes): AppError => {
    const rule = options.limits[name];
    const now = options.clock.now();
    const state = stateOf(rule, res, now);
    const resetIso = new Date(state.resetAt).toISOString();
    const what = AUTH_LIMITS.has(name) ? "Too many attempts" : "Rate limit exceeded";
    return new AppError(errorCodeFor(name), `${what}: at most ${rule.points} per ${rule.duration} s. Try again after ${resetIso}.`, {
      retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
      headers: rateLimitHeaders(state),
    });
  };

  // A store failure without a working fallback must not turn into a 500 nor lock users out: let the request through.
  const storeFailure = (name: LimitName, err: unknown): RateLimitState => {
    options.logger.warn({ err: err instanceof Error ? err.message : String(err), limit: name }, "rate limiter store failed; request allowed");
    const rule = options.limits[name];
    return { limit: rule.points, remaining: rule.points, resetAt: options.clock.now() + rule.duration * 1000 };
  };

  return {
    async consume(name, key, points = 1) {
      try {
        const res = await limiter(name).consume(key, points);
        return stateOf(options.limits[name], res, options.clock.now());
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) throw refusal(name, rejection);
        return storeFailure(name, rejection);
      }
    },
    async check(name, key) {
      const rule = options.limits[name];
      let res: RateLimiterRes | null;
      try {
        res = await limiter(name).get(key);
      } catch (err) {
        return storeFailure(name, err);
      }
      if (!res) return { limit: rule.points, remaining: rule.points, resetAt: options.clock.now() + rule.duration * 1000 };
      if (res.consumedPoints >= rule.points) throw refusal(name, res);
      return stateOf(rule, res, options.clock.now());
    },
    async reset(name, key) {
      try {
        await limiter(name).delete(key);
      } catch (err) {
        storeFailure(name, err);
      }
    },
    async refund(name, key) {
      try {
        // nothing to give back in a window that has passed or was reset: a negative count would add a point
        const res = await limiter(name).get(key);
        if (res && res.consumedPoints > 0) await limiter(name).reward(key, 1);
      } catch (err) {
        storeFailure(name, err);
      }
    },
  };
}
