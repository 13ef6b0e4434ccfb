import type { PlanDefinition } from "@gw/config";
import type { KeyRateLimit } from "@gw/auth/api-keys/index";
import { AppError } from "@gw/shared";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, type RateLimiterRes } from "rate-limiter-flexible";
import { MemoryConcurrencyLimiter, RedisConcurrencyLimiter, type ConcurrencyLimiter, type ConcurrencySlot } from "./concurrency";

const WINDOW_SECONDS = 60;

export interface LimitDecision {
  headers: Record<string, string>;
  slot: ConcurrencySlot;
}

/**
 * CONTRACT 7: per account, the plan's requests per minute and concurrent requests. Counters live in memory,
 * or in Redis when configured (with rate-limiter-flexible's in-memory insurance limiter when Redis fails).
 */
export class RequestLimits {
  /**
   * One counter per account whatever its plan: the count of the current window is compared with the plan's limit
   * here, so a plan change mid-window keeps the requests already made (a limiter per plan would start the new plan
   * at zero). Like rate-limiter-flexible's own limit check, refused requests count too.
   */
  private readonly rpm: RateLimiterAbstract;
  private readonly concurrency: ConcurrencyLimiter;

  constructor(private readonly opts: { redis?: Redis; logger: Logger; slotTtlMs: number; now: () => number }) {
    this.concurrency = opts.redis ? new RedisConcurrencyLimiter(opts.redis, opts.slotTtlMs, opts.logger) : new MemoryConcurrencyLimiter();
    const base = { points: Number.MAX_SAFE_INTEGER, duration: WINDOW_SECONDS, keyPrefix: "gw:rpm" };
    this.rpm = opts.redis
      ? new RateLimiterRedis({ ...base, storeClient: opts.redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(base) })
      : new RateLimiterMemory(base);
  }

  private headers(plan: Pick<PlanDefinition, "requestsPerMinute">, res: RateLimiterRes): Record<string, string> {
    return {
      "X-RateLimit-Limit": String(plan.requestsPerMinute),
      "X-RateLimit-Remaining": String(Math.max(0, plan.requestsPerMinute - res.consumedPoints)),
      "X-RateLimit-Reset": String(Math.ceil((this.opts.now() + res.msBeforeNext) / 1000)),
    };
  }

  private refusal(message: string, resetMs: number, headers: Record<string, string>): AppError {
    const resetAt = new Date(this.opts.now() + resetMs).toISOString();
    return new AppError("rate_limit_exceeded", `${message} Try again after ${resetAt}.`, {
      retryAfterSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
      headers,
    });
  }

  /**
   * The headers for a caller refused before it is known (no valid key): limits are per account and nothing was
   * counted, so it is told a new account's allowance (`plan`, the free plan), all of it remaining.
   */
  unidentifiedHeaders(plan: PlanDefinition): Record<string, string> {
    return {
      "X-RateLimit-Limit": String(plan.requestsPerMinute),
      "X-RateLimit-Remaining": String(plan.requestsPerMinute),
      "X-RateLimit-Reset": String(Math.ceil((this.opts.now() + WINDOW_SECONDS * 1000) / 1000)),
    };
  }

  /** Counts the request and takes a concurrency slot; throws 429 (with headers) when either limit is reached. */
  async admit(userId: string, plan: PlanDefinition): Promise<LimitDecision> {
    const counted = await this.rpm.consume(userId, 1);
    const headers = this.headers(plan, counted);
    if (counted.consumedPoints > plan.requestsPerMinute) {
      throw this.refusal(`Rate limit exceeded: ${plan.requestsPerMinute} requests per minute on the ${plan.name} plan.`, counted.msBeforeNext, headers);
    }
    const slot = await this.concurrency.acquire(userId, plan.concurrentRequests);
    if (!slot) {
      throw this.refusal(`Rate limit exceeded: at most ${plan.concurrentRequests} concurrent requests on the ${plan.name} plan.`, 1000, headers);
    }
    return { headers, slot };
  }

  /**
   * CONTRACT 10: an API key's own rate limit, counted like an account's (in the same counters, keyed by the key).
   * Throws 429 with the key's X-RateLimit-* when either of its limits is reached.
   */
  async admitKey(keyId: string, rate: KeyRateLimit): Promise<LimitDecision> {
    const counted = await this.rpm.consume(`key:${keyId}`, 1);
    const headers = this.headers(rate, counted);
    if (counted.consumedPoints > rate.requestsPerMinute) {
      throw this.refusal(`Rate limit exceeded: this API key allows ${rate.requestsPerMinute} requests per minute.`, counted.msBeforeNext, headers);
    }
    const slot = await this.concurrency.acquire(`key:${keyId}`, rate.concurrentRequests);
    if (!slot) throw this.refusal(`Rate limit exceeded: this API key allows at most ${rate.concurrentRequests} concurrent requests.`, 1000, headers);
    return { headers, slot };
  }
}
