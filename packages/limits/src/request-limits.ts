import type { PlanDefinition } from "@gw/config";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { MemoryConcurrencyLimiter, RedisConcurrencyLimiter, type ConcurrencyLimiter, type ConcurrencySlot } from "./concurrency";
import { createRateLimiter, type RateLimiter, type WindowCount } from "./rate-limiter";
import { rateLimitRefusal, type RateLimitState } from "./rate-limit-state";

const WINDOW_SECONDS = 60;

/** A plan's or an API key's request limits (CONTRACT 7, CONTRACT 10). */
export interface RequestRate {
  requestsPerMinute: number;
  concurrentRequests: number;
}

export interface LimitDecision {
  state: RateLimitState;
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
  private readonly rpm: RateLimiter;
  private readonly concurrency: ConcurrencyLimiter;

  constructor(private readonly opts: { redis?: Redis; logger: Logger; slotTtlMs: number; now: () => number }) {
    this.concurrency = opts.redis ? new RedisConcurrencyLimiter(opts.redis, opts.slotTtlMs, opts.logger) : new MemoryConcurrencyLimiter();
    this.rpm = createRateLimiter({ prefix: "gw:rpm", windowSeconds: WINDOW_SECONDS, redis: opts.redis });
  }

  private state(rate: RequestRate, count: WindowCount): RateLimitState {
    return { limit: rate.requestsPerMinute, remaining: Math.max(0, rate.requestsPerMinute - count.count), resetAt: this.opts.now() + count.msBeforeReset };
  }

  private refusal(message: string, retryInMs: number, state: RateLimitState) {
    return rateLimitRefusal("rate_limit_exceeded", message, state, this.opts.now(), retryInMs);
  }

  /**
   * Where a caller refused before it is known (no valid key) stands: limits are per account and nothing was
   * counted, so it is told a new account's allowance (`plan`, the free plan), all of it remaining.
   */
  unidentifiedState(plan: RequestRate): RateLimitState {
    return { limit: plan.requestsPerMinute, remaining: plan.requestsPerMinute, resetAt: this.opts.now() + WINDOW_SECONDS * 1000 };
  }

  /** Counts the request and takes a concurrency slot; throws 429 (with headers) when either limit is reached. */
  async admit(userId: string, plan: PlanDefinition): Promise<LimitDecision> {
    const counted = await this.rpm.hit(userId);
    const state = this.state(plan, counted);
    if (counted.count > plan.requestsPerMinute) {
      throw this.refusal(`Rate limit exceeded: ${plan.requestsPerMinute} requests per minute on the ${plan.name} plan.`, counted.msBeforeReset, state);
    }
    const slot = await this.concurrency.acquire(userId, plan.concurrentRequests);
    if (!slot) {
      throw this.refusal(`Rate limit exceeded: at most ${plan.concurrentRequests} concurrent requests on the ${plan.name} plan.`, 1000, state);
    }
    return { state, slot };
  }

  /**
   * CONTRACT 10: an API key's own rate limit, counted like an account's (in the same counters, keyed by the key).
   * Throws 429 with the key's X-RateLimit-* when either of its limits is reached.
   */
  async admitKey(keyId: string, rate: RequestRate): Promise<LimitDecision> {
    const counted = await this.rpm.hit(`key:${keyId}`);
    const state = this.state(rate, counted);
    if (counted.count > rate.requestsPerMinute) {
      throw this.refusal(`Rate limit exceeded: this API key allows ${rate.requestsPerMinute} requests per minute.`, counted.msBeforeReset, state);
    }
    const slot = await this.concurrency.acquire(`key:${keyId}`, rate.concurrentRequests);
    if (!slot) throw this.refusal(`Rate limit exceeded: this API key allows at most ${rate.concurrentRequests} concurrent requests.`, 1000, state);
    return { state, slot };
  }
}
