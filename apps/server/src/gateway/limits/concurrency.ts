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

/**
 * Slots shared by every instance through Redis. When Redis is unreachable it falls back to per-instance
 * slots (documented in docs/configuration.md): limits loosen to one set per instance, money is unaffected.
 */
export class RedisConcurrencyLimiter implements ConcurrencyLimiter {
  private readonly fallback = new MemoryConcurrencyLimiter();

  constructor(
    private readonly redis: Redis,
    private readonly slotTtlMs: number,
    private readonly logger: Logger,
  ) {}

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
      return this.fallback.tryAcquire(userId, limit);
    }
    if (granted !== 1) return null;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        // A failed release only delays the slot until its TTL.
        this.redis.zrem(key, slotId).catch(() => undefined);
      },
    };
  }
}
