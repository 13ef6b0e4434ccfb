import type { Config } from "@gw/config";
import type { Database } from "@gw/db";
import { AppError, type Clock } from "@gw/shared";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import { createLedger } from "@gw/billing/ledger/index";
import { createPlanResolver } from "@gw/billing/plan-resolver";
import type { ApiKeyVerifier, AppContext, SessionReader } from "./context";

export interface ServiceBase {
  config: Config;
  db: Database;
  clock: Clock;
  logger: Logger;
  onShutdown: (fn: () => Promise<void> | void) => void;
}

function createRedis(base: ServiceBase): Redis | undefined {
  if (!base.config.redisUrl) return undefined;
  // Commands fail fast while Redis is down so callers can apply their documented fallback.
  const redis = new Redis(base.config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  redis.on("error", (err) => base.logger.warn({ err: err.message }, "redis error"));
  base.onShutdown(() => { redis.disconnect(); });
  return redis;
}

// PLACEHOLDERS: each is replaced by the real service as its feature lands.
const notReady = (what: string) => new AppError("service_unavailable", `${what} is not available yet.`);
const placeholderApiKeys: ApiKeyVerifier = { verify: async () => null, recordUse: () => undefined };
const placeholderSessions: SessionReader = { fromRequest: async () => { throw notReady("Sessions"); } };

/** Builds the services of one app instance. */
export async function createServices(base: ServiceBase): Promise<AppContext> {
  const redis = createRedis(base);
  const ledger = await createLedger(base.db, base.clock, { holdTtlSeconds: base.config.holdTtlSeconds });
  base.onShutdown(() => ledger.close());
  return {
    ...base,
    redis,
    ledger,
    apiKeys: placeholderApiKeys,
    sessions: placeholderSessions,
    plans: createPlanResolver(base),
  };
}
