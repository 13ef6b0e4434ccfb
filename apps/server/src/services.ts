import type { Config } from "@gw/config";
import type { Database } from "@gw/db";
import type { Clock } from "@gw/shared";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import { createLedger, KeySpend, createPlanResolver, createBilling, UsageRepository } from "@gw/billing";
import { ApiKeyService, localRevocationBus, redisRevocationBus, createAuthServices, createCredentialVerifier } from "@gw/auth";
import { databaseHealthCheck, createHealthChecks, Catalog, AuditLog } from "@gw/api";
import { createRateLimits } from "@gw/limits";
import type { AppContext } from "./context";
import { createSessionReader } from "./auth/session-reader";
import { accountsForBilling } from "./billing/hooks";
import { claimWriterSlot } from "./writer-slot";

export interface ServiceBase {
  config: Config;
  db: Database;
  clock: Clock;
  logger: Logger;
  onShutdown: (fn: () => Promise<void> | void) => void;
}

/**
 * How long a Redis command may go unanswered. A Redis that stops answering without closing the connection (paused,
 * overloaded, cut off by the network) would otherwise hold every limited request forever: past this the command
 * fails (callers fall back to memory) and the connection is dropped, so later commands fail at once until a
 * reconnect gets answers again.
 */
const REDIS_COMMAND_TIMEOUT_MS = 500;

function createRedis(base: ServiceBase): Redis | undefined {
  if (!base.config.redisUrl) return undefined;
  // Commands fail fast while Redis is down so callers can apply their documented fallback. Commands cut off by a
  // dropped connection are not sent again on reconnect: their callers have already moved on (a resent slot
  // acquisition would take a slot nobody releases).
  const redis = new Redis(base.config.redisUrl, {
    maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS, socketTimeout: REDIS_COMMAND_TIMEOUT_MS, autoResendUnfulfilledCommands: false,
  });
  redis.on("error", (err) => base.logger.warn({ err: err.message }, "redis error"));
  base.onShutdown(() => { redis.disconnect(); });
  return redis;
}

/** How often each instance pings the database in the background (GET /api/status reads when it last answered). */
const DATABASE_PING_INTERVAL_MS = 1_000;

/** Builds the services of one app instance. */
export async function createServices(base: ServiceBase, hooks: { onLedgerFlush?: (seconds: number) => void } = {}): Promise<AppContext> {
  const redis = createRedis(base);
  const usage = new UsageRepository(base.db);
  const ledger = await createLedger(base.db, base.clock, {
    holdTtlSeconds: base.config.holdTtlSeconds, onFlush: hooks.onLedgerFlush, onAppended: (docs) => usage.entriesWritten(docs),
  });
  // hooks run last registered first: the ledger's final flush, then the summaries it started
  base.onShutdown(() => usage.close());
  base.onShutdown(() => ledger.close());
  const keySpend = await KeySpend.create(base.db, base.clock, ledger, usage, base.logger);
  const limits = createRateLimits({ limits: base.config.limits, clock: base.clock, logger: base.logger, redis });
  // the keys' usage rows this DATA_DIR's previous run wrote, released after the last flush
  const usageWriter = claimWriterSlot(base.config.dataDir);
  base.onShutdown(() => usageWriter.release());
  const apiKeys = await ApiKeyService.create({
    connection: base.db.connection, clock: base.clock, logger: base.logger, keyEnv: base.config.keyEnv,
    bus: redis ? redisRevocationBus(redis, base.logger) : localRevocationBus(), usageWriter: usageWriter.id,
  });
  base.onShutdown(() => apiKeys.close());
  const auth = await createAuthServices({ ...base, limits, revokeAllKeysForUser: (userId) => apiKeys.revokeAllKeysForUser(userId) });
  // GET /api/status tells a busy database from a dead one by when it last answered
  base.onShutdown(base.db.keepPinging(DATABASE_PING_INTERVAL_MS));
  // the catalog in force replaces config.models/plans/creditPackages before anything reads them
  const catalog = await Catalog.open(base.db, base.config, base.logger);
  catalog.start();
  base.onShutdown(() => catalog.stop());
  const sessions = createSessionReader(auth, base.config.publicUrl);
  const healthChecks = createHealthChecks({ clock: base.clock });
  healthChecks.register("database", databaseHealthCheck(base.db));
  const plans = createPlanResolver(base);
  const billing = await createBilling({ ...base, ledger, plans, ...accountsForBilling(base, auth.users) });
  return {
    ...base,
    redis,
    ledger,
    keySpend,
    usage,
    apiKeys,
    limits,
    healthChecks,
    sessions,
    credentials: createCredentialVerifier({ keys: apiKeys, session: (req) => sessions.fromRequest(req), clock: base.clock }),
    auth,
    accountHooks: auth.accountHooks,
    plans,
    billing,
    audit: new AuditLog(base.db, () => base.clock.now()),
    catalog,
  };
}
