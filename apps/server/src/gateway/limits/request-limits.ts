import type { PlanDefinition } from "@gw/config";
import { AppError } from "@gw/shared";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
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
  private readonly rpm = new Map<string, RateLimiterAbstract>();
  private readonly concurrency: ConcurrencyLimiter;

  constructor(private readonly opts: { redis?: Redis; logger: Logger; slotTtlMs: number; now: () => number }) {
    this.concurrency = opts.redis ? new RedisConcurrencyLimiter(opts.redis, opts.slotTtlMs, opts.logger) : new MemoryConcurrencyLimiter();
  }

  private limiterFor(plan: PlanDefinition): RateLimiterAbstract {
    const id = `${plan.id}:${plan.requestsPerMinute}`;
    let limiter = this.rpm.get(id);
    if (!limiter) {
      const base = { points: plan.requestsPerMinute, duration: WINDOW_SECONDS, keyPrefix: `gw:rpm:${id}` };
      limiter = this.opts.redis
        ? new RateLimiterRedis({ ...base, storeClient: this.opts.redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(base) })
        : new RateLimiterMemory(base);
      this.rpm.set(id, limiter);
    }
    return limiter;
  }

  private headers(plan: PlanDefinition, res: RateLimiterRes): Record<string, string> {
    return {
      "X-RateLimit-Limit": String(plan.requestsPerMinute),
      "X-RateLimit-Remaining": String(Math.max(0, res.remainingPoints)),
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

  /** Counts the request and takes a concurrency slot; throws 429 (with headers) when either limit is reached. */
  async admit(userId: string, plan: PlanDefinition): Promise<LimitDecision> {
    let counted: RateLimiterRes;
    try {
      counted = await this.limiterFor(plan).consume(userId, 1);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const headers = this.headers(plan, rejection);
      throw this.refusal(`Rate limit exceeded: ${plan.requestsPerMinute} requests per minute on the ${plan.name} plan.`, rejection.msBeforeNext, headers);
    }
    const headers = this.headers(plan, counted);
    const slot = await this.concurrency.acquire(userId, plan.concurrentRequests);
    if (!slot) {
      throw this.refusal(`Rate limit exceeded: at most ${plan.concurrentRequests} concurrent requests on the ${plan.name} plan.`, 1000, headers);
    }
    return { headers, slot };
  }
}
