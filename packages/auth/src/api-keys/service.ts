import { AppError, newId, type Clock } from "@gw/shared";
import type { Connection } from "mongoose";
import type { Logger } from "pino";
import { compileAccess, NO_CONTROLS, type KeyAccess, type KeyControls } from "./controls";
import { generateApiKey, hashApiKey, isWellFormedApiKey } from "./key-format";
import { ApiKeyRepository, type ApiKeyRecord } from "./repository";
import type { RevocationBus } from "./revocation-bus";
import { UsageRecorder } from "./usage-recorder";
import { VerifierCache, type CachedKey } from "./verifier-cache";

/** Who an API key authenticates. */
export interface KeyPrincipal {
  userId: string;
  keyId: string;
  /** keys can only be created after e-mail verification (CONTRACT 2), so a key's owner is verified */
  emailVerified: true;
  /** the key's controls (CONTRACT 10), from the verifier's cache */
  key: KeyAccess;
}

/** Returned once, at creation: the only time the full key is visible. */
export interface CreatedApiKey {
  id: string;
  name: string;
  description: string;
  key: string;
  prefix: string;
  createdAt: Date;
  controls: KeyControls;
}

export interface ApiKeySummary {
  id: string;
  name: string;
  description: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  usageCount: number;
  controls: KeyControls;
}

/** A rotation's answer: the key with its new secret (shown once), same id and controls. */
export type RotatedApiKey = CreatedApiKey & Pick<ApiKeySummary, "lastUsedAt" | "usageCount">;

/** Key management used by the key routes and by account deletion. */
export interface ApiKeyManager {
  /**
   * `stillAuthorized` is asked once the key is stored: when it answers false (the creating session was revoked
   * meanwhile, e.g. by account deletion) the key is revoked again and the call fails with 401 unauthorized.
   */
  create(userId: string, input: { name: string; description?: string; controls?: KeyControls }, stillAuthorized?: () => Promise<boolean>): Promise<CreatedApiKey>;
  listActive(userId: string): Promise<ApiKeySummary[]>;
  /** throws key_not_found for an unknown, foreign or revoked key */
  get(userId: string, keyId: string): Promise<ApiKeySummary>;
  /** replaces the key's controls and evicts it from every instance's cache; throws key_not_found */
  updateControls(userId: string, keyId: string, controls: KeyControls): Promise<ApiKeySummary>;
  /** a new secret for the key; the old one works for `graceSeconds` more; throws key_not_found (409 conflict on a race) */
  rotate(userId: string, keyId: string, graceSeconds: number): Promise<RotatedApiKey>;
  /** throws key_not_found for an unknown, foreign or already revoked key */
  revoke(userId: string, keyId: string): Promise<void>;
  /** account deletion: revokes every key of the user everywhere; returns how many were active */
  revokeAllKeysForUser(userId: string): Promise<number>;
  /**
   * The owner's suspension (CONTRACT 12): every key of the user is refused with 403 account_suspended, or accepted
   * again, on every instance within a second (the revocation's eviction path). Returns how many keys it touched.
   */
  setUserSuspended(userId: string, suspended: boolean): Promise<number>;
}

export interface ApiKeyServiceOptions {
  connection: Connection;
  clock: Clock;
  logger: Logger;
  keyEnv: string;
  bus: RevocationBus;
  /** cache lifetime of a lookup; below 1 s so a missed revocation message still heals within CONTRACT 3's second */
  cacheTtlMs?: number;
  usageFlushMs?: number;
  /** the name of this process's usage row of each key; one writer at a time (a random one by default) */
  usageWriter?: string;
}

/**
 * API keys: generation, hashed storage, cached verification with immediate local eviction on revoke and
 * cross-instance eviction through the revocation bus, and batched usage statistics.
 */
export class ApiKeyService implements ApiKeyManager {
  private readonly repo: ApiKeyRepository;
  private readonly cache: VerifierCache;
  private readonly usage: UsageRecorder;
  private readonly loading = new Map<string, Promise<CachedKey | null>>();

  private constructor(private readonly options: ApiKeyServiceOptions) {
    this.repo = new ApiKeyRepository(options.connection, options.usageWriter);
    this.cache = new VerifierCache(options.cacheTtlMs ?? 900);
    this.usage = new UsageRecorder((delta) => this.repo.addUsage(delta), options.logger, options.usageFlushMs ?? 1_000);
    options.bus.onRevoked((hash) => this.forget(hash));
  }

  static async create(options: ApiKeyServiceOptions): Promise<ApiKeyService> {
    const service = new ApiKeyService(options);
    await service.repo.init();
    service.usage.start();
    return service;
  }

  /**
   * Checks, in order: well-formed, cached answer, stored active key. Returns null for anything invalid so the
   * caller answers 401 invalid_api_key without learning which check failed; a valid key of a suspended account
   * throws 403 account_suspended.
   */
  async verify(rawKey: string): Promise<KeyPrincipal | null> {
    if (!isWellFormedApiKey(rawKey)) return null;
    const hash = hashApiKey(rawKey);
    let cached = this.cache.get(hash);
    if (cached === undefined) {
      cached = await this.load(hash);
    } else if (this.cache.refreshDue(hash)) {
      // Served from cache now; the reload keeps it warm. A failed reload just lets the entry expire.
      this.load(hash).catch((err: unknown) => this.options.logger.warn({ err: String(err) }, "api key cache refresh failed"));
    }
    if (!cached) return null;
    if (cached.suspended) throw new AppError("account_suspended", "This account is suspended. Contact the operator of this gateway.");
    // a rotated-out secret: refused once its grace period is over
    if (cached.graceUntil !== undefined && this.options.clock.now() >= cached.graceUntil) return null;
    return { userId: cached.userId, keyId: cached.keyId, emailVerified: true, key: cached.access };
  }

  /** One database lookup per hash at a time: a burst of requests with a cold key shares it. */
  private load(hash: string): Promise<CachedKey | null> {
    let pending = this.loading.get(hash);
    if (!pending) {
      const snapshot = this.cache.snapshot();
      pending = this.lookup(hash)
        .then((value) => {
          this.cache.set(hash, value, snapshot);
          return value;
        })
        .finally(() => {
          if (this.loading.get(hash) === pending) this.loading.delete(hash);
        });
      this.loading.set(hash, pending);
    }
    return pending;
  }

  /** The key a hash opens: its current secret, else a previous one still in its grace period. */
  private async lookup(hash: string): Promise<CachedKey | null> {
    const record = await this.repo.findActiveByHash(hash);
    if (record) return { keyId: record.id, userId: record.userId, suspended: record.suspended, access: compileAccess(record.id, record.controls) };
    const previous = await this.repo.findByPreviousHash(hash);
    if (!previous || previous.until.getTime() <= this.options.clock.now()) return null;
    const { record: key, until } = previous;
    return { keyId: key.id, userId: key.userId, suspended: key.suspended, access: compileAccess(key.id, key.controls), graceUntil: until.getTime() };
  }

  /** Drops the cached answer and any lookup already under way, so no later caller gets a pre-revocation answer. */
  private forget(hash: string): void {
    this.cache.evict(hash);
    this.loading.delete(hash);
  }

  recordUse(keyId: string): void {
    this.usage.record(keyId, new Date(this.options.clock.now()));
  }

  /** Writes pending usage now (tests, shutdown). */
  flushUsage(): Promise<void> {
    return this.usage.flush();
  }

  async create(userId: string, input: { name: string; description?: string; controls?: KeyControls }, stillAuthorized?: () => Promise<boolean>): Promise<CreatedApiKey> {
    const generated = generateApiKey(this.options.keyEnv);
    const record = await this.repo.insert({
      id: newId("key"),
      userId,
      name: input.name,
      description: input.description ?? "",
      prefix: generated.prefix,
      hash: generated.hash,
      createdAt: new Date(this.options.clock.now()),
      controls: input.controls ?? NO_CONTROLS,
    });
    this.forget(generated.hash);
    // Account deletion revokes the sessions, then the keys: a creation that passed its session check before and
    // stored its key after the key revocation finds its session revoked here, so no key outlives its account.
    if (stillAuthorized && !(await stillAuthorized())) {
      const revoked = await this.repo.revoke(userId, record.id, new Date(this.options.clock.now()));
      if (revoked) await this.evictEverywhere([revoked]);
      throw new AppError("unauthorized", "Authentication required. Please log in.");
    }
    return { id: record.id, name: record.name, description: record.description, key: generated.key, prefix: record.prefix, createdAt: record.createdAt, controls: record.controls };
  }

  async listActive(userId: string): Promise<ApiKeySummary[]> {
    const records = await this.repo.listActive(userId);
    return records.map(summaryOf);
  }

  async get(userId: string, keyId: string): Promise<ApiKeySummary> {
    const record = await this.repo.findActive(userId, keyId);
    if (!record) throw keyNotFound(keyId);
    return summaryOf(record);
  }

  async updateControls(userId: string, keyId: string, controls: KeyControls): Promise<ApiKeySummary> {
    const record = await this.repo.updateControls(userId, keyId, controls);
    if (!record) throw keyNotFound(keyId);
    // every secret of the key, the previous ones in their grace period included, is looked up again everywhere
    await this.evictEverywhere([record], await this.repo.previousHashes(keyId));
    return summaryOf(record);
  }

  async rotate(userId: string, keyId: string, graceSeconds: number): Promise<RotatedApiKey> {
    const generated = generateApiKey(this.options.keyEnv);
    const graceUntil = new Date(this.options.clock.now() + graceSeconds * 1000);
    const before = await this.repo.rotate(userId, keyId, { hash: generated.hash, prefix: generated.prefix }, graceUntil);
    if (before === "conflict") throw new AppError("conflict", `API key '${keyId}' is being rotated by another request.`);
    if (!before) throw keyNotFound(keyId);
    // the old secret's cached answer goes everywhere: looked up again, it is served only within its grace period
    await this.evictEverywhere([before], [generated.hash]);
    return { ...(await this.get(userId, keyId)), key: generated.key, prefix: generated.prefix };
  }

  async revoke(userId: string, keyId: string): Promise<void> {
    const revoked = await this.repo.revoke(userId, keyId, new Date(this.options.clock.now()));
    if (!revoked) throw keyNotFound(keyId);
    await this.evictEverywhere([revoked], await this.repo.previousHashes(keyId));
  }

  async revokeAllKeysForUser(userId: string): Promise<number> {
    const revoked = await this.repo.revokeAllForUser(userId, new Date(this.options.clock.now()));
    await this.evictEverywhere(revoked);
    return revoked.length;
  }

  async setUserSuspended(userId: string, suspended: boolean): Promise<number> {
    const keys = await this.repo.setSuspendedForUser(userId, suspended);
    await this.evictEverywhere(keys);
    return keys.length;
  }

  async close(): Promise<void> {
    await this.usage.stop();
    await this.options.bus.close();
  }

  private async evictEverywhere(records: ApiKeyRecord[], moreHashes: string[] = []): Promise<void> {
    const hashes = [...records.map((r) => r.hash), ...moreHashes];
    for (const hash of hashes) this.forget(hash);
    await this.options.bus.publish(hashes);
  }
}

const keyNotFound = (keyId: string) => new AppError("key_not_found", `No active API key with id '${keyId}'.`);

const summaryOf = (r: ApiKeyRecord): ApiKeySummary => ({
  id: r.id, name: r.name, description: r.description, prefix: r.prefix, createdAt: r.createdAt, lastUsedAt: r.lastUsedAt,
  usageCount: r.usageCount, controls: r.controls,
});
