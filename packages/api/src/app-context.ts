import type { Config, PlanDefinition } from "@gw/config";
import type { Database } from "@gw/db";
import type { Clock } from "@gw/shared";
import type { Redis } from "ioredis";
import type { Request } from "express";
import type { Logger } from "pino";
import type { Billing, Ledger, KeySpend, UsageRepository } from "@gw/billing";
import type { ApiKeyManager, AccountHooks, ApiKeyVerifier, AuthServices, CredentialVerifier, Principal } from "@gw/auth";
import type { HealthChecks } from "./status/health-checks";
import type { Catalog } from "./catalog/catalog";
import type { AuditLog } from "./console/audit-log";
import type { RateLimits, RateLimitState } from "@gw/limits";

export type { ApiKeyVerifier, Principal, RateLimits, RateLimitState };

/** Reads the session cookie; throws AppError session_expired / unauthorized as CONTRACT 2 says, null when no cookie. */
export interface SessionReader {
  fromRequest(req: Request): Promise<Principal | null>;
  /** whether a session read earlier is still live (not revoked or expired), for writes that raced its revocation */
  isActive(sessionId: string): Promise<boolean>;
}

/** The plan whose limits apply to a user (free when no active subscription). Cached briefly. */
export interface PlanResolver {
  planFor(userId: string): Promise<PlanDefinition>;
  /** drop the cached plan after a subscription change */
  invalidate(userId: string): void;
}

/**
 * Everything a request handler may need, built once per app instance (tests build several per process).
 * Handlers call these services; they never reach into models directly.
 */
export interface AppContext {
  config: Config;
  db: Database;
  clock: Clock;
  logger: Logger;
  /** set when REDIS_URL is configured: shared limits, slots and revocations across instances */
  redis?: Redis;
  ledger: Ledger;
  /** each API key's spend per period, held and settled beside the balance (CONTRACT 10) */
  keySpend: KeySpend;
  /** the usage records (settle entries' `meta`) read back by `_id`: GET /api/usage, `usage.list`, the console's spend */
  usage: UsageRepository;
  apiKeys: ApiKeyVerifier & ApiKeyManager;
  sessions: SessionReader;
  /** session or API key, as every route that takes either decides it */
  credentials: CredentialVerifier<Request>;
  plans: PlanResolver;
  /** credits, payments, subscriptions, redemption codes (packages/billing) */
  billing: Billing;
  /** CONTRACT 12: the admin actions' audit log */
  audit: AuditLog;
  /** CONTRACT 12: the catalog in force (models, plans, credit packages), kept current from the database */
  catalog: Catalog;
  limits: RateLimits;
  /** dependency probes behind GET /api/status/external; features register theirs (text_provider, payment_provider, ...) */
  healthChecks: HealthChecks;
  /** accounts: users, sessions, e-mail tokens, OAuth (packages/auth) */
  auth: AuthServices;
  /** react to account events: billing registers `onAccountDeleted` to cancel the subscription */
  accountHooks: AccountHooks;
  /** background work (flushers, sweepers) registered here is stopped and drained on shutdown */
  onShutdown: (fn: () => Promise<void> | void) => void;
}
