import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { newId } from "@gw/shared";

/** A held slot; release it exactly once when the response ends. */
export interface ConcurrencySlot {
  release(): void;
}

export interface ConcurrencyLimiter {
  /** a slot, or null when `limit` slots are already taken */
  acquire(userId: string, limit: number): Promise<ConcurrencySlot | null>;
}

export class MemoryConcurrencyLimiter implements ConcurrencyLimiter {
  private readonly inFlight = new Map<string, number>();

  async acquire(userId: string, limit: number): Promise<ConcurrencySlot | null> {
    return this.tryAcquire(userId, limit);
  }

  tryAcquire(userId: string, limit: number): ConcurrencySlot | null {
    const current = this.inFlight.get(userId) ?? 0;
    if (current >= limit) return null;
    this.inFlight.set(userId, current + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const n = (this.inFlight.get(userId) ?? 1) - 1;
        if (n <= 0) this.inFlight.delete(userId);
        else this.inFlight.set(userId, n);
      },
    };
  }
}

// A sorted set per user: member = slot id, score = expiry (Redis server time, ms). Expired members are dropped
// before counting, so slots of a crashed instance free themselves after the slot TTL.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
`;

// Pushes a held slot's expiry forward (Redis server time) while its request runs, so a request that outlives the
// slot TTL (a stream that keeps sending is never cut) still counts; only the slots of a crashed instance run out.
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[1]), ARGV[2]) == 1 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
end
return 1
`;

/** At most this many slots wait to be given back after an outage; older ones expire in Redis on their own. */
const MAX_LEFTOVER_SLOTS = 10_000;

/**
 * Slots shared by every instance through Redis. When Redis is unreachable it falls back to per-instance
 * slots (documented in docs/configuration.md): limits loosen to one set per instance, money is unaffected.
 */
export class RedisConcurrencyLimiter implements ConcurrencyLimiter {
  private readonly fallback = new MemoryConcurrencyLimiter();
  /**
   * Slots Redis may still hold that nobody uses: releases that failed, and acquisitions that timed out after they
   * were sent (a Redis that stopped answering runs them when it resumes). Removed once Redis is back, so an outage
   * does not leave users refused for a whole slot TTL.
   */
  private readonly leftovers = new Map<string, string>();

  constructor(
    private readonly redis: Redis,
    private readonly slotTtlMs: number,
    private readonly logger: Logger,
  ) {
    redis.on("ready", () => this.releaseLeftovers());
  }

  async acquire(userId: string, limit: number): Promise<ConcurrencySlot | null> {
    const key = `gw:slots:${userId}`;
    // Always the server's own id: a client-chosen one (X-Request-Id) repeated on every request would make the
    // requests share one member of the set, so they would count as one slot.
    const slotId = newId("slot");
    let granted: unknown;
    try {
      granted = await this.redis.eval(ACQUIRE, 1, key, String(limit), String(this.slotTtlMs), slotId);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, "redis unavailable: in-memory concurrency slots");
      this.remember(slotId, key);
      return this.fallback.tryAcquire(userId, limit);
    }
    if (granted !== 1) return null;
    const renewal = setInterval(() => {
      // a failed renewal leaves the slot to expire at its TTL, as a crashed instance's would
      this.redis.eval(RENEW, 1, key, String(this.slotTtlMs), slotId).catch(() => undefined);
    }, this.slotTtlMs / 3);
    renewal.unref();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        clearInterval(renewal);
        this.redis.zrem(key, slotId).catch(() => this.remember(slotId, key));
      },
    };
  }

  private remember(slotId: string, key: string): void {
    if (this.leftovers.size < MAX_LEFTOVER_SLOTS) this.leftovers.set(slotId, key);
  }

  private releaseLeftovers(): void {
    for (const [slotId, key] of this.leftovers) {
      this.leftovers.delete(slotId);
      // A failed release only delays the slot until its TTL.
      this.redis.zrem(key, slotId).catch(() => undefined);
    }
  }
}
