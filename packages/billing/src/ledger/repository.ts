import type { Collection, CreateIndexesOptions, IndexSpecification, MongoBulkWriteError } from "mongodb";
import type { Database } from "@gw/db";
import type { LedgerEntry, LedgerEntryKind } from "./types";

/** Stored shape: the entry with its id as `_id` = `<userId>:<seq>`, so the primary key itself makes each position
 * of a chain single-use. */
export type LedgerDoc = Omit<LedgerEntry, "id"> & { _id: string };

/** A live ledger instance; its reservations are released by others once it stops beating. */
export interface InstanceDoc {
  _id: string;
  seenAt: Date;
}

/** The ledger's collection. The gateway's usage API reads the `settle` entries (their `meta` is the usage record). */
export const LEDGER_COLLECTION = "ledger_entries";

export interface Head {
  seq: number;
  balance: number;
}

export const entryId = (userId: string, seq: number): string => `${userId}:${seq.toString().padStart(12, "0")}`;

export const toEntry = (doc: LedgerDoc): LedgerEntry => ({
  id: doc._id,
  userId: doc.userId,
  seq: doc.seq,
  kind: doc.kind,
  amount: doc.amount,
  balanceAfter: doc.balanceAfter,
  idempotencyKey: doc.idempotencyKey,
  holdId: doc.holdId,
  cost: doc.cost,
  reservationId: doc.reservationId,
  meta: doc.meta,
  createdAt: doc.createdAt,
});

export type InsertOutcome =
  | { ok: true }
  /** `inserted` entries went in; the one at that index hit a unique key (seq taken or idempotency key used) */
  | { ok: false; inserted: number };

const isDuplicateKey = (err: unknown): err is MongoBulkWriteError =>
  typeof err === "object" && err !== null && "code" in err && (err as { code: unknown }).code === 11000;

/**
 * Raw access to the ledger collection. Uses the driver directly (no mongoose casting) because this is the hot path,
 * and every filter here is built from trusted values.
 */
export class LedgerRepository {
  readonly collection: Collection<LedgerDoc>;
  readonly instances: Collection<InstanceDoc>;

  /** `collection`: another chain of the same kind (a key's spend, packages/billing/src/key-spend) */
  constructor(private readonly db: Database, collection = LEDGER_COLLECTION) {
    this.collection = db.connection.collection<LedgerDoc>(collection);
    this.instances = db.connection.collection<InstanceDoc>("ledger_instances");
  }

  /**
   * The unique index always (it makes an idempotency key single-use). The indexes that only serve queries are built
   * where queries use them: FerretDB's SQLite backend pushes no filter but `_id` equality down to its storage (its
   * `explain` says `filterPushdown: false`), so there each of them would only cost every insert a JSON extraction
   * (a quarter of its CPU per ledger entry in the bench) and speed up nothing. Left over ones are dropped there.
   */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ idempotencyKey: 1 }, { unique: true, name: "idempotency_key_unique" });
    const queryIndexes: Array<[IndexSpecification, string, CreateIndexesOptions?]> = [
      [{ userId: 1, seq: -1 }, "user_seq"],
      [{ reservationId: 1 }, "reservation", { sparse: true }],
      // usage queries: one user's settle entries by the time of the request
      [{ userId: 1, "meta.createdAt": -1 }, "usage_by_time"],
    ];
    const useful = await this.filtersUseIndexes();
    const existing = useful ? [] : (await this.collection.indexes()).map((i) => i.name);
    for (const [spec, name, options] of queryIndexes) {
      if (useful) await this.collection.createIndex(spec, { ...options, name });
      else if (existing.includes(name)) await this.collection.dropIndex(name);
    }
  }

  /**
   * false when the server answers a filter on a field other than `_id` without its indexes (see ensureIndexes). A
   * server that will not explain (permissions, an unknown dialect) gets every index.
   */
  private async filtersUseIndexes(): Promise<boolean> {
    const driverDb = this.db.connection.db;
    if (!driverDb) throw new Error("database not connected");
    try {
      const plan = await driverDb.command({ explain: { find: LEDGER_COLLECTION, filter: { userId: "" } }, verbosity: "queryPlanner" });
      return plan.filterPushdown !== false;
    } catch {
      return true;
    }
  }

  async head(userId: string): Promise<Head> {
    const doc = await this.collection.find({ userId }, { projection: { seq: 1, balanceAfter: 1 } }).sort({ seq: -1 }).limit(1).next();
    return doc ? { seq: doc.seq, balance: doc.balanceAfter } : { seq: 0, balance: 0 };
  }

  /** Ordered insert: stops at the first unique-key violation and says how many went in before it. */
  async insertChain(docs: LedgerDoc[]): Promise<InsertOutcome> {
    try {
      await this.collection.insertMany(docs, { ordered: true });
      return { ok: true };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const firstError = Array.isArray(err.writeErrors) ? err.writeErrors[0] : err.writeErrors;
      const inserted = typeof firstError?.index === "number" ? firstError.index : err.insertedCount;
      return { ok: false, inserted };
    }
  }

  async findByIdempotencyKey(key: string): Promise<LedgerDoc | null> {
    return this.collection.findOne({ idempotencyKey: key });
  }

  async findByIdempotencyKeys(keys: string[]): Promise<LedgerDoc[]> {
    if (keys.length === 0) return [];
    return this.collection.find({ idempotencyKey: { $in: keys } }).toArray();
  }

  async entries(userId: string, opts: { limit: number; beforeSeq?: number; kinds?: LedgerEntryKind[] }): Promise<LedgerDoc[]> {
    const filter: Record<string, unknown> = { userId };
    if (opts.beforeSeq !== undefined) filter.seq = { $lt: opts.beforeSeq };
    if (opts.kinds?.length) filter.kind = { $in: opts.kinds };
    return this.collection.find(filter).sort({ seq: -1 }).limit(opts.limit).toArray();
  }

  async reservationEntries(reservationId: string): Promise<LedgerDoc[]> {
    return this.collection.find({ reservationId }).toArray();
  }

  async registerInstance(id: string, now: Date): Promise<void> {
    await this.instances.insertOne({ _id: id, seenAt: now });
  }

  /** false when the instance was declared dead (its reservations released by another instance) */
  async beat(id: string, now: Date): Promise<boolean> {
    const result = await this.instances.updateOne({ _id: id }, { $set: { seenAt: now } });
    return result.matchedCount === 1;
  }

  async deadInstances(before: Date): Promise<string[]> {
    return (await this.instances.find({ seenAt: { $lt: before } }).toArray()).map((d) => d._id);
  }

  async forgetInstance(id: string): Promise<void> {
    await this.instances.deleteOne({ _id: id });
  }

  async userIds(): Promise<string[]> {
    return (await this.collection.distinct("userId")) as string[];
  }

  async chain(userId: string): Promise<LedgerDoc[]> {
    return this.collection.find({ userId }).sort({ seq: 1 }).toArray();
  }
}
