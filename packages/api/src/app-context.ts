import type { Config, PlanDefinition } from "@gw/config";
import type { Database } from "@gw/db";
import type { Clock } from "@gw/shared";
import type { Redis } from "ioredis";
import type { Request } from "express";
import type { Logger } from "pino";
import type { Billing } from "@gw/billing";
import type { Ledger } from "@gw/billing/ledger/index";
import type { KeySpend } from "@gw/billing/key-spend/key-spend";
import type { ApiKeyManager, KeyAccess } from "@gw/auth/api-keys/index";
import type { LimitName } from "@gw/config";
import type { HealthChecks } from "./status/health-checks";
import type { Catalog } from "./catalog/catalog";
import type { AuditLog } from "./console/audit-log";
import type { AccountHooks, AuthServices } from "@gw/auth";

/** Who is calling: resolved from an API key or a session cookie. */
export interface Principal {
  userId: string;
  /** set when authenticated by API key */
  keyId?: string;
  /** set when authenticated by API key: its controls (CONTRACT 10) */
  key?: KeyAccess;
  /** set when authenticated by session cookie */
  sessionId?: string;
  emailVerified: boolean;
}

/** API-key verification on the hot path: in-process cache, evicted at once on revoke (and across instances via Redis). */
export interface ApiKeyVerifier {
  /** null when the key is missing, malformed, unknown or revoked */
  verify(rawKey: string): Promise<Principal | null>;
  /** counts a use; written off the request path (batched) */
  recordUse(keyId: string): void;
}

/** Where one rate limit stands for one caller (for X-RateLimit-* headers). */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** ms epoch when the window resets */
  resetAt: number;
}

/**
 * SPEC 8 / CONTRACT 7 limits, by the names of config.limits. Over the limit, methods throw AppError 429
 * (auth_rate_limit for register/login/reset, rate_limit_exceeded otherwise) with Retry-After and X-RateLimit-* set.
 */
export interface RateLimits {
  /** counts `points` (default 1) for `key` */
  consume(name: LimitName, key: string, points?: number): Promise<RateLimitState>;
  /** throws if `key` is already over the limit, without counting (e.g. check before a login, consume on failure) */
  check(name: LimitName, key: string): Promise<RateLimitState>;
  /** forgets `key`'s count (e.g. after a successful login) */
  reset(name: LimitName, key: string): Promise<void>;
  /** gives back one hit counted for `key` (an attempt counted before it ran that turned out not to count) */
  refund(name: LimitName, key: string): Promise<void>;
}

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
  apiKeys: ApiKeyVerifier & ApiKeyManager;
  sessions: SessionReader;
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
