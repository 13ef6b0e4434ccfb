import type { Collection, CreateIndexesOptions, IndexSpecification, MongoBulkWriteError } from "mongodb";
import { isDuplicateKey, type Database } from "@gw/db";
import { ChainReader, isCreditKind } from "./chain-reader";
import { CREDIT_KINDS, type LedgerEntry, type LedgerEntryKind } from "./types";

/** Stored shape: the entry with its id as `_id` = `<userId>:<seq>`, so the primary key itself makes each position
 * of a chain single-use. */
export type LedgerDoc = Omit<LedgerEntry, "id"> & {
  _id: string;
  /**
   * The position of the newest credit entry (a kind the billing history lists) at or before this one, 0 for none: a
   * running value carried by the chain like `balanceAfter`, so the history is read by `_id` from the head. Absent on
   * entries written before it existed (read then with a query).
   */
  lastCredit?: number;
  /** credit entries: the position of the credit entry before this one (0 for none), the history's next link */
  prevCredit?: number;
  /**
   * credit entries: the positions of the credit entries before this one, newest first, at most CREDIT_SKIP (the first
   * is `prevCredit`): a skip list, so that a history page reads its entries at once rather than link after link. May
   * be shorter than the chain's credits (a writer that did not know them); absent on entries older than it.
   */
  credits?: number[];
};

/** Positions a credit entry's skip list (`credits`) holds at most. */
export const CREDIT_SKIP = 32;

/** A live ledger instance; its reservations are released by others once it stops beating. */
export interface InstanceDoc {
  _id: string;
  seenAt: Date;
  /** it records the users it reserves for (reserved-users.ts); absent on instances of older versions */
  listsUsers?: boolean;
}

/** The ledger's collection. The gateway's usage API reads the `settle` entries (their `meta` is the usage record). */
export const LEDGER_COLLECTION = "ledger_entries";

export interface Head {
  seq: number;
  balance: number;
  /** see LedgerDoc.lastCredit; undefined when the head entry predates it */
  lastCredit?: number;
  /** the newest credit positions, newest first (lastCredit, then its skip list); undefined when not known */
  recentCredits?: number[];
}

/** The credit positions before a credit entry, newest first: its skip list, else its one link (none: unknown). */
export const creditsBefore = (doc: LedgerDoc): number[] | undefined =>
  doc.credits ?? (doc.prevCredit === undefined ? undefined : doc.prevCredit > 0 ? [doc.prevCredit] : []);

/** A credit entry's position and those before it, newest first, at most CREDIT_SKIP (what the next credit links to). */
export const creditsFrom = (doc: LedgerDoc): number[] => [doc.seq, ...(creditsBefore(doc) ?? [])].slice(0, CREDIT_SKIP);

/** The clock skew allowed between instances that write one chain (an entry's `createdAt` is its writer's clock). */
export const CLOCK_SKEW_MS = 5 * 60_000;

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

/**
 * The most entries one insert command carries. FerretDB (1.x) applies an insert in chunks of 100 documents and, when a
 * chunk fails on a duplicate key, inserts that chunk's documents one by one up to the failing one and then goes on
 * with the NEXT chunk even for an ordered insert: a conflict at position k of a 128-entry batch left positions
 * k..99 empty and 100..127 written, a hole in the chain (seen after a crash, when a retried entry met its first try).
 * Commands of at most one chunk stop at the first failure on MongoDB and FerretDB alike.
 */
export const INSERT_CHUNK = 100;

export type InsertOutcome =
  | { ok: true }
  /** `inserted` entries went in; the one at that index hit a unique key (seq taken or idempotency key used) */
  | { ok: false; inserted: number };


/**
 * Raw access to the ledger collection. Uses the driver directly (no mongoose casting) because this is the hot path,
 * and every filter here is built from trusted values.
 */
export class LedgerRepository {
  readonly collection: Collection<LedgerDoc>;
  readonly instances: Collection<InstanceDoc>;
  /** reads of one chain by `_id` (see ChainReader) */
  readonly reader: ChainReader;

  /** `collection`: another chain of the same kind (a key's spend, packages/billing/src/key-spend) */
  constructor(private readonly db: Database, collection = LEDGER_COLLECTION) {
    this.reader = new ChainReader(db, collection);
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

  /** The chain's newest position and balance, read by `_id` (see ChainReader.head). */
  async head(userId: string): Promise<Head> {
    const doc = await this.reader.head(userId);
    if (!doc) return { seq: 0, balance: 0, lastCredit: 0 };
    const lastCredit = doc.lastCredit ?? (isCreditKind(doc.kind) ? doc.seq : undefined);
    return { seq: doc.seq, balance: doc.balanceAfter, lastCredit, ...(isCreditKind(doc.kind) ? { recentCredits: creditsFrom(doc) } : {}) };
  }

  /**
   * The newest credit entry at or before `seq` for a chain whose entries predate `lastCredit`: the chain read back by
   * `_id` from `seq` to its first credit entry (or to an entry that carries the link), needed once per such chain, by
   * its first new entry.
   */
  async legacyLastCredit(userId: string, seq: number): Promise<number> {
    let found = 0;
    await this.reader.walkBack(userId, seq, (doc) => {
      if (isCreditKind(doc.kind)) found = doc.seq;
      else if (doc.lastCredit !== undefined) found = doc.lastCredit;
      else return true;
      return false;
    });
    return found;
  }

  /**
   * Ordered insert: stops at the first unique-key violation and says how many went in before it. Sent in commands of
   * at most INSERT_CHUNK entries, each only after the one before went in whole, so nothing after a failure is written.
   */
  async insertChain(docs: LedgerDoc[]): Promise<InsertOutcome> {
    const outcome = await this.insertChunks(docs);
    const last = docs[(outcome.ok ? docs.length : outcome.inserted) - 1];
    if (last) await this.reader.advance(last.userId, last.seq);
    return outcome;
  }

  private async insertChunks(docs: LedgerDoc[]): Promise<InsertOutcome> {
    for (let start = 0; start < docs.length; start += INSERT_CHUNK) {
      const chunk = docs.slice(start, start + INSERT_CHUNK);
      try {
        await this.collection.insertMany(chunk, { ordered: true });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const { writeErrors, insertedCount } = err as MongoBulkWriteError;
        const firstError = Array.isArray(writeErrors) ? writeErrors[0] : writeErrors;
        const inserted = typeof firstError?.index === "number" ? firstError.index : insertedCount;
        return { ok: false, inserted: start + inserted };
      }
    }
    return { ok: true };
  }

  async findByIdempotencyKeys(keys: string[]): Promise<LedgerDoc[]> {
    if (keys.length === 0) return [];
    return this.collection.find({ idempotencyKey: { $in: keys } }).toArray();
  }

  /**
   * Newest first, read by `_id`: credit kinds follow the chain's credit skip lists (a page of credits costs the head,
   * the newest credit, and one concurrent batch per CREDIT_SKIP entries), other kinds walk the chain backwards. A link
   * missing on an entry older than the links falls back to the query for the rest.
   */
  async entries(userId: string, opts: { limit: number; beforeSeq?: number; kinds?: LedgerEntryKind[] }): Promise<LedgerDoc[]> {
    const headDoc = await this.reader.head(userId);
    const top = Math.min(headDoc?.seq ?? 0, (opts.beforeSeq ?? Number.MAX_SAFE_INTEGER) - 1);
    if (top < 1 || opts.limit < 1) return [];
    const kinds = opts.kinds?.length ? new Set(opts.kinds) : undefined;
    if (kinds && [...kinds].every(isCreditKind)) return this.creditEntries(userId, headDoc?.seq === top ? headDoc : await this.reader.at(userId, top), top, opts.limit, kinds);
    const found: LedgerDoc[] = [];
    await this.reader.walkBack(userId, top, (doc) => {
      if (!kinds || kinds.has(doc.kind)) found.push(doc);
      return found.length < opts.limit;
    });
    return found;
  }

  /** The credit entries at or below `start` (the entry at position `top`), newest first, read along the skip lists. */
  private async creditEntries(userId: string, start: LedgerDoc | null, top: number, limit: number, kinds: Set<LedgerEntryKind>): Promise<LedgerDoc[]> {
    const found: LedgerDoc[] = [];
    const newest = start ? start.lastCredit ?? (isCreditKind(start.kind) ? start.seq : undefined) : undefined;
    // every kind asked for is on the page: read no more links than the page still needs
    const everyCredit = CREDIT_KINDS.every((kind) => kinds.has(kind));
    /** the oldest credit entry read, and the positions of the credit entries before it (undefined: not known) */
    let lowest = top + 1;
    let links: number[] | undefined = newest === undefined ? undefined : newest > 0 ? [newest] : [];
    if (start && newest === start.seq) {
      if (kinds.has(start.kind)) found.push(start);
      lowest = start.seq;
      links = creditsBefore(start);
    }
    while (links && links.length > 0 && found.length < limit) {
      const batch = everyCredit ? links.slice(0, limit - found.length) : links;
      const docs = await Promise.all(batch.map((seq) => this.reader.at(userId, seq)));
      let next: number[] | undefined;
      for (const doc of docs) {
        // a link that does not hold: the query takes over below what was read
        if (!doc || !isCreditKind(doc.kind)) break;
        if (kinds.has(doc.kind) && found.length < limit) found.push(doc);
        lowest = doc.seq;
        if (doc === docs[docs.length - 1]) next = creditsBefore(doc);
      }
      links = next;
    }
    if (links?.length === 0 || found.length >= limit) return found;
    // entries older than the links (or a link that does not hold): the query, below what was read
    return [...found, ...(await this.queryEntries(userId, { limit: limit - found.length, beforeSeq: lowest, kinds: [...kinds] }))];
  }

  private async queryEntries(userId: string, opts: { limit: number; beforeSeq?: number; kinds?: LedgerEntryKind[] }): Promise<LedgerDoc[]> {
    const filter: Record<string, unknown> = { userId };
    if (opts.beforeSeq !== undefined) filter.seq = { $lt: opts.beforeSeq };
    if (opts.kinds?.length) filter.kind = { $in: opts.kinds };
    return this.collection.find(filter).sort({ seq: -1 }).limit(opts.limit).toArray();
  }

  /** A query on the whole collection: only for the reservations of an instance older than ReservedUsers. */
  async reservationEntries(reservationId: string): Promise<LedgerDoc[]> {
    return this.collection.find({ reservationId }).toArray();
  }

  /**
   * The entries of `reservationId` in a user's chain, read back from the head by `_id` down to the first entry written
   * CLOCK_SKEW_MS before `since`: the reservation's entries are all written after `since` (on the clock of the instance
   * that wrote it), and other instances' entries in between carry their own clocks.
   */
  async reservationEntriesOf(userId: string, reservationId: string, since: Date): Promise<LedgerDoc[]> {
    const found: LedgerDoc[] = [];
    const head = await this.reader.head(userId);
    if (!head) return found;
    const stopBefore = since.getTime() - CLOCK_SKEW_MS;
    await this.reader.walkBack(userId, head.seq, (doc) => {
      if (doc.createdAt.getTime() < stopBefore) return false;
      if (doc.reservationId === reservationId) found.push(doc);
      return true;
    });
    return found;
  }

  async registerInstance(id: string, now: Date): Promise<void> {
    await this.instances.insertOne({ _id: id, seenAt: now, listsUsers: true });
  }

  /** false when the instance was declared dead (its reservations released by another instance) */
  async beat(id: string, now: Date): Promise<boolean> {
    const result = await this.instances.updateOne({ _id: id }, { $set: { seenAt: now } });
    return result.matchedCount === 1;
  }

  async deadInstances(before: Date): Promise<InstanceDoc[]> {
    return this.instances.find({ seenAt: { $lt: before } }).toArray();
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
