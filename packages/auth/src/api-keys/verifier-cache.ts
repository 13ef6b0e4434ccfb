import type { KeyAccess } from "./controls";

/** What a key hash resolves to: the owning key, or null for an unknown/revoked key. */
export interface CachedKey {
  keyId: string;
  userId: string;
  /** the key's controls, so that expiry, IP and model checks cost no database round trip */
  access: KeyAccess;
  /** a secret replaced by a rotation: valid until then (domain clock, ms) */
  graceUntil?: number;
}

/** Taken before a database lookup starts: the answer's age counts from then, not from when it arrived. */
export interface CacheSnapshot {
  generation: number;
  takenAt: number;
}

interface Entry {
  value: CachedKey | null;
  expiresAt: number;
  /** past this, the entry is still served but one caller is told to reload it in the background */
  refreshAt: number;
  refreshing: boolean;
}

/**
 * In-process cache of key lookups, keyed by SHA-256 hash (never by plaintext). Entries live for a short TTL on a
 * monotonic timer: infrastructure timing, independent of the injectable domain clock. Half-way through the TTL
 * (`refreshDue`) a key in use is reloaded in the background, so a busy key never waits on the database while no
 * answer is ever older than the TTL.
 */
export class VerifierCache {
  private readonly entries = new Map<string, Entry>();
  // Bumped on every eviction so a lookup that started before a revocation cannot re-insert the stale answer.
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 50_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(hash: string): CachedKey | null | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.value;
  }

  /** A token to pass to `set`, taken before the database lookup starts. */
  snapshot(): CacheSnapshot {
    return { generation: this.generation, takenAt: this.now() };
  }

  /** true once per entry when it is past half its TTL: that caller reloads it (`set`) off the request path */
  refreshDue(hash: string): boolean {
    const entry = this.entries.get(hash);
    if (!entry || entry.refreshing || entry.refreshAt > this.now()) return false;
    entry.refreshing = true;
    return true;
  }

  /**
   * The TTL runs from the snapshot, when the database was asked: a lookup that read a key just before another
   * instance revoked it and answered slowly must not be served for a whole TTL after it arrived (CONTRACT 3's second).
   */
  set(hash: string, value: CachedKey | null, snapshot: CacheSnapshot): void {
    if (snapshot.generation !== this.generation) return;
    if (this.entries.size >= this.maxEntries && !this.entries.has(hash)) this.entries.clear();
    const { takenAt } = snapshot;
    this.entries.set(hash, { value, expiresAt: takenAt + this.ttlMs, refreshAt: takenAt + this.ttlMs / 2, refreshing: false });
  }

  evict(hash: string): void {
    this.generation += 1;
    this.entries.delete(hash);
  }
}
