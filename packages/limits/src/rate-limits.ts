import type { LimitName, LimitRule } from "@gw/config";
import type { Clock, ErrorCode } from "@gw/shared";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { createRateLimiter, type RateLimiter, type WindowCount } from "./rate-limiter";
import { rateLimitRefusal, type RateLimitState } from "./rate-limit-state";

/**
 * SPEC 8 / CONTRACT 7 limits, by the names of config.limits. Over the limit, methods throw AppError 429
 * (auth_rate_limit for register/login/reset, rate_limit_exceeded otherwise) with Retry-After and X-RateLimit-* set.
 */
export interface RateLimits {
  /** counts `points` (default 1) for `key` */
  consume(name: LimitName, key: string, points?: number): Promise<RateLimitState>;
  /** throws if `key` is already over the limit, without counting (e.g. check before a login, consume on failure) */
  check(name: LimitName, key: string): Promise<RateLimitState>;
  /** forgets `key`'s count (e.g. after a successful login) */
  reset(name: LimitName, key: string): Promise<void>;
  /** gives back one hit counted for `key` (an attempt counted before it ran that turned out not to count) */
  refund(name: LimitName, key: string): Promise<void>;
}

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

/** One rate-limit service for the whole app (SPEC 8), keyed by the names of config.limits. */
export function createRateLimits(options: RateLimitsOptions): RateLimits {
  const counters = new Map<LimitName, RateLimiter>();
  const counter = (name: LimitName): RateLimiter => {
    let found = counters.get(name);
    if (!found) {
      found = createRateLimiter({ prefix: `rl:${name}`, windowSeconds: options.limits[name].duration, redis: options.redis });
      counters.set(name, found);
    }
    return found;
  };

  const stateOf = (rule: LimitRule, count: WindowCount, now: number): RateLimitState => ({
    limit: rule.points,
    remaining: Math.max(0, rule.points - count.count),
    resetAt: now + count.msBeforeReset,
  });

  const refusal = (name: LimitName, count: WindowCount) => {
    const rule = options.limits[name];
    const now = options.clock.now();
    const what = AUTH_LIMITS.has(name) ? "Too many attempts" : "Rate limit exceeded";
    return rateLimitRefusal(errorCodeFor(name), `${what}: at most ${rule.points} per ${rule.duration} s.`, stateOf(rule, count, now), now, count.msBeforeReset);
  };

  // A store failure without a working fallback must not turn into a 500 nor lock users out: let the request through.
  const storeFailure = (name: LimitName, err: unknown): RateLimitState => {
    options.logger.warn({ err: err instanceof Error ? err.message : String(err), limit: name }, "rate limiter store failed; request allowed");
    const rule = options.limits[name];
    return { limit: rule.points, remaining: rule.points, resetAt: options.clock.now() + rule.duration * 1000 };
  };

  return {
    async consume(name, key, points = 1) {
      let count: WindowCount;
      try {
        count = await counter(name).hit(key, points);
      } catch (err) {
        return storeFailure(name, err);
      }
      if (count.count > options.limits[name].points) throw refusal(name, count);
      return stateOf(options.limits[name], count, options.clock.now());
    },
    async check(name, key) {
      const rule = options.limits[name];
      let count: WindowCount | null;
      try {
        count = await counter(name).peek(key);
      } catch (err) {
        return storeFailure(name, err);
      }
      if (!count) return { limit: rule.points, remaining: rule.points, resetAt: options.clock.now() + rule.duration * 1000 };
      if (count.count >= rule.points) throw refusal(name, count);
      return stateOf(rule, count, options.clock.now());
    },
    async reset(name, key) {
      try {
        await counter(name).reset(key);
      } catch (err) {
        storeFailure(name, err);
      }
    },
    async refund(name, key) {
      try {
        await counter(name).refund(key);
      } catch (err) {
        storeFailure(name, err);
      }
    },
  };
}
