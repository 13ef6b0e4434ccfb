import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, type RateLimiterRes } from "rate-limiter-flexible";

/** Where one key's count stands in the current window. */
export interface WindowCount {
  /** points counted in the window, the last hit's included */
  count: number;
  /** ms until the window resets */
  msBeforeReset: number;
}

/**
 * A fixed-window counter per key. The caller compares the count with its limit, so one counter serves a limit that
 * changes (a plan change mid-window keeps the requests already made). Refused requests count too.
 */
export interface RateLimiter {
  /** counts `points` (default 1) for `key` */
  hit(key: string, points?: number): Promise<WindowCount>;
  /** the window's count without counting; null when nothing is counted */
  peek(key: string): Promise<WindowCount | null>;
  /** forgets the key's count */
  reset(key: string): Promise<void>;
  /** gives back one point counted in the current window; nothing when none is */
  refund(key: string): Promise<void>;
}

export interface RateLimiterOptions {
  /** names the counters (the Redis key prefix) */
  prefix: string;
  windowSeconds: number;
}

// the limit is the caller's: the store never refuses
const UNCAPPED = Number.MAX_SAFE_INTEGER;

function counter(limiter: RateLimiterAbstract): RateLimiter {
  const countOf = (res: RateLimiterRes): WindowCount => ({ count: res.consumedPoints, msBeforeReset: res.msBeforeNext });
  return {
    async hit(key, points = 1) {
      return countOf(await limiter.consume(key, points));
    },
    async peek(key) {
      const res = await limiter.get(key);
      return res && countOf(res);
    },
    async reset(key) {
      await limiter.delete(key);
    },
    async refund(key) {
      // nothing to give back in a window that has passed or was reset: a negative count would add a point
      const res = await limiter.get(key);
      if (res && res.consumedPoints > 0) await limiter.reward(key, 1);
    },
  };
}

const flexibleOptions = (options: RateLimiterOptions) => ({ keyPrefix: options.prefix, points: UNCAPPED, duration: options.windowSeconds });

/** Counters of this instance only. */
export function memoryRateLimiter(options: RateLimiterOptions): RateLimiter {
  return counter(new RateLimiterMemory(flexibleOptions(options)));
}

/**
 * Counters shared by every instance. Fallback (documented): while Redis is unreachable each instance counts in
 * memory, so limits stay enforced per instance instead of failing open or failing every request.
 */
export function redisRateLimiter(redis: Redis, options: RateLimiterOptions): RateLimiter {
  const base = flexibleOptions(options);
  return counter(new RateLimiterRedis({ ...base, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(base) }));
}

/** Shared through Redis when it is configured, else in memory. */
export function createRateLimiter(options: RateLimiterOptions & { redis?: Redis }): RateLimiter {
  return options.redis ? redisRateLimiter(options.redis, options) : memoryRateLimiter(options);
}
