import type { Redis } from "ioredis";
import type { Logger } from "pino";

/** Tells every gateway instance that a key (by hash, never plaintext) was revoked, so they evict it at once. */
export interface RevocationBus {
  publish(hashes: string[]): Promise<void>;
  onRevoked(handler: (hash: string) => void): void;
  close(): Promise<void>;
}

/** Single instance (no REDIS_URL): revocations are only local; the short cache TTL bounds staleness elsewhere. */
export const localRevocationBus = (): RevocationBus => ({
  publish: async () => undefined,
  onRevoked: () => undefined,
  close: async () => undefined,
});

const CHANNEL = "gw:api-keys:revoked";

/** Redis pub/sub. A lost message (Redis down) is healed by the verifier's sub-second cache TTL. */
export function redisRevocationBus(redis: Redis, logger: Logger): RevocationBus {
  // A subscribed connection cannot run other commands; the offline queue lets it subscribe before it is connected
  // and re-subscribe after reconnects. No command timeout: the subscription waits for Redis however long it is away
  // (only the commands that requests wait on are bounded), nor a retry limit: with the main connection's one retry, a
  // Redis still down at start failed the queued subscription for good, and that instance never heard a revocation.
  const subscriber = redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined, socketTimeout: undefined });
  subscriber.on("error", (err: Error) => logger.warn({ err: err.message }, "redis subscriber error"));
  const handlers: Array<(hash: string) => void> = [];
  subscriber.on("message", (channel: string, message: string) => {
    if (channel !== CHANNEL) return;
    for (const hash of message.split(",")) for (const handler of handlers) handler(hash);
  });
  subscriber.subscribe(CHANNEL).catch((err: unknown) => logger.warn({ err: String(err) }, "redis subscribe failed"));
  return {
    async publish(hashes) {
      if (hashes.length === 0) return;
      try {
        await redis.publish(CHANNEL, hashes.join(","));
      } catch (err) {
        logger.warn({ err: String(err) }, "could not publish key revocation; other instances evict on cache expiry");
      }
    },
    onRevoked(handler) {
      handlers.push(handler);
    },
    async close() {
      subscriber.disconnect();
    },
  };
}
