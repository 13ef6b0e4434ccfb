import { isDuplicateKey } from "@gw/db";
import { LRUCache } from "lru-cache";
import type { Collection, Filter, OptionalUnlessRequiredId } from "mongodb";

/** ids remembered as missing (a bound by count) */
const MISSED_IDS = 65_536;

/**
 * Documents that never change once written (the caller writes only ones computed whole from immutable data), read by
 * `_id` through a bounded in-process LRU cache: one that exists is read from the database once per instance of this
 * class, as long as the cache keeps it. A missing one is never kept: it is looked up again until it is written.
 */
export class ImmutableDocs<T extends { _id: string }> {
  private readonly cache: LRUCache<string, T>;
  /** ids whose last lookup found nothing: only a hint for lookups ahead of need (see `missedBefore`) */
  private readonly missed = new LRUCache<string, true>({ max: MISSED_IDS });
  /** documents waiting for the next insert (see `put`) */
  private queued: Array<{ doc: T; resolve: () => void; reject: (err: unknown) => void }> = [];
  /** the inserts running, until the queue is empty */
  private inserting: Promise<void> | undefined;

  /** `maxJsonBytes`: the cache's bound, as the sum of its documents' JSON lengths */
  constructor(private readonly collection: Collection<T>, maxJsonBytes: number) {
    this.cache = new LRUCache<string, T>({ maxSize: maxJsonBytes, sizeCalculation: (doc) => JSON.stringify(doc).length });
  }

  async get(id: string): Promise<T | null> {
    const kept = this.cache.get(id);
    if (kept) return kept;
    const doc = (await this.collection.findOne({ _id: id } as Filter<T>)) as T | null;
    if (doc) {
      this.cache.set(id, doc);
      this.missed.delete(id);
    } else {
      this.missed.set(id, true);
    }
    return doc;
  }

  /**
   * true: the last lookup of `id` found nothing. A reader looking ahead of need skips such ids, so that documents it
   * rarely reaches (and so never computes) are not looked up by every read; `get` still looks them up.
   */
  missedBefore(id: string): boolean {
    return this.missed.has(id);
  }

  /**
   * Stores a document computed whole, for the next reader: one that another reader stored first holds the same, since
   * what it is computed from never changes. It is kept at once (unless not `keep`). One insert runs at a time: the
   * documents put meanwhile, or in the same turn of the event loop, go together in the next.
   */
  put(doc: T, keep = true): Promise<void> {
    if (keep) this.cache.set(doc._id, doc);
    this.missed.delete(doc._id);
    return new Promise((resolve, reject) => {
      this.queued.push({ doc, resolve, reject });
      this.startInserting();
    });
  }

  /** Waits for the documents put to be inserted (before the database closes). */
  async flush(): Promise<void> {
    while (this.inserting) await this.inserting;
  }

  private startInserting(): void {
    this.inserting ??= this.insertQueued().finally(() => {
      this.inserting = undefined;
      // put after the last batch was taken, before this ran
      if (this.queued.length > 0) this.startInserting();
    });
  }

  private async insertQueued(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    for (let batch = this.queued.splice(0); batch.length > 0; batch = this.queued.splice(0)) {
      try {
        await this.collection.insertMany(batch.map((p) => p.doc as OptionalUnlessRequiredId<T>), { ordered: false });
        for (const { resolve } of batch) resolve();
      } catch (err) {
        // duplicates only: other readers stored those first (the rest went in, the insert being unordered)
        if (onlyDuplicates(err)) for (const { resolve } of batch) resolve();
        else for (const { reject } of batch) reject(err);
      }
    }
  }
}

/** An unordered insert's error that only says some documents were there already. */
function onlyDuplicates(err: unknown): boolean {
  const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
  if (!isDuplicateKey(err)) return false;
  const errors = Array.isArray(writeErrors) ? writeErrors as Array<{ code?: unknown }> : [];
  return errors.every((e) => e.code === 11000);
}
