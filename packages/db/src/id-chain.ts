import type { Connection, mongo } from "mongoose";

/** One position of a chain: `_id` is `<owner>:<n>` (n from 1, no holes), `ref` the id of the document listed. */
interface IdChainDoc {
  _id: string;
  ref: string;
}

/** A document written before its chain existed, by its owner (the one-time backfill's input). */
export interface ChainedRef {
  owner: string;
  ref: string;
}

/** Where the one-time backfill is recorded as done (no `:`, so it never meets a position). */
const BACKFILLED = "backfilled";
/** Positions read at once by `list`: the first batch, doubled each time up to the last. */
const FIRST_BATCH = 4;
const MAX_BATCH = 64;

const positionId = (owner: string, n: number): string => `${owner}:${n}`;

const isDuplicateKey = (err: unknown): boolean =>
  typeof err === "object" && err !== null && (err as { code?: unknown }).code === 11000;

/** Reads documents by `_id` in concurrent batches (pipelined over the driver's pool); those missing are left out. */
export async function findByIds<T extends { _id: string }>(collection: mongo.Collection<T>, ids: readonly string[]): Promise<T[]> {
  const found: T[] = [];
  for (let i = 0; i < ids.length; i += MAX_BATCH) {
    const docs = await Promise.all(ids.slice(i, i + MAX_BATCH).map((_id) => collection.findOne({ _id } as mongo.Filter<T>)));
    for (const doc of docs) if (doc) found.push(doc as T);
  }
  return found;
}

/**
 * An insert-only list of document ids per owner (a user's keys, a key's usage rows, a user's subscription
 * snapshots), read and written by `_id` only. The embedded FerretDB looks up `_id` equality in its index and answers
 * any other filter by reading the whole collection, so listing an owner's documents by a field query costs the whole
 * collection; through a chain it costs that owner's entries. Every write is a unique insert at the next free
 * position: correct with any number of writers on FerretDB, which applies concurrent updates of one document
 * non-atomically. A ref may appear twice (a retried or racing add, the backfill): `list` gives each once. A ref whose
 * document is missing (written first, the document's insert then failed) is the reader's to skip.
 */
export class IdChain {
  private readonly docs: mongo.Collection<IdChainDoc>;
  private backfill: Promise<void> | undefined;

  /**
   * `legacy`: the documents written before the chain existed, read once per database (the first `ready()` of this
   * version's first process writes the marker; later ones cost one `_id` lookup).
   */
  constructor(connection: Connection, collection: string, private readonly legacy: () => AsyncIterable<ChainedRef>) {
    this.docs = connection.collection<IdChainDoc>(collection) as unknown as mongo.Collection<IdChainDoc>;
  }

  /** Chains the documents written before this chain existed, once; every other method waits for it. */
  ready(): Promise<void> {
    this.backfill ??= this.runBackfill().catch((err: unknown) => {
      this.backfill = undefined; // tried again by the next call
      throw err;
    });
    return this.backfill;
  }

  /** The owner's refs, oldest first, each once. */
  async list(owner: string): Promise<string[]> {
    await this.ready();
    return this.read(owner);
  }

  /** Adds `ref` at the owner's first free position (another writer's position is skipped). */
  async append(owner: string, ref: string): Promise<void> {
    await this.ready();
    await this.insertFrom(owner, (await this.length(owner)) + 1, ref);
  }

  /** The ref at the owner's first position (a chain of one: the key a secret's hash opens), or null. */
  async first(owner: string): Promise<string | null> {
    await this.ready();
    return (await this.docs.findOne({ _id: positionId(owner, 1) }))?.ref ?? null;
  }

  /** `append` unless the ref is listed already (an idempotent add, for refs that a retried write may add again). */
  async add(owner: string, ref: string): Promise<void> {
    const refs = await this.list(owner);
    if (!refs.includes(ref)) await this.insertFrom(owner, refs.length + 1, ref);
  }

  private async insertFrom(owner: string, from: number, ref: string): Promise<void> {
    for (let n = from; ; n++) {
      try {
        await this.docs.insertOne({ _id: positionId(owner, n), ref });
        return;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
  }

  /** Reads positions 1, 2, … in growing concurrent batches up to the first that does not exist (chains have no holes). */
  private async read(owner: string): Promise<string[]> {
    const refs = new Set<string>();
    for (let next = 1, size = FIRST_BATCH; ; next += size, size = Math.min(size * 2, MAX_BATCH)) {
      const batch = await Promise.all(Array.from({ length: size }, (_, i) => this.docs.findOne({ _id: positionId(owner, next + i) })));
      for (const doc of batch) {
        if (!doc) return [...refs];
        refs.add(doc.ref);
      }
    }
  }

  /** The last position that exists: galloping forward from 0, then a binary search. */
  private async length(owner: string): Promise<number> {
    const exists = async (n: number) => (await this.docs.findOne({ _id: positionId(owner, n) }, { projection: { _id: 1 } })) !== null;
    let low = 0;
    let step = 1;
    while (await exists(low + step)) {
      low += step;
      step *= 2;
    }
    let high = low + step;
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (await exists(mid)) low = mid;
      else high = mid;
    }
    return low;
  }

  /**
   * Every legacy ref not in its owner's chain is inserted after the chain's unbroken start, in one unordered insert;
   * a position another writer took meanwhile (or one past a hole a crash left) sends that ref to `insertFrom`, which
   * fills the hole. The marker goes in last: a backfill cut short runs again in full, and what it adds twice is
   * listed once.
   */
  private async runBackfill(): Promise<void> {
    if (await this.docs.findOne({ _id: BACKFILLED })) return;
    const chained = new Map<string, Map<number, string>>();
    for await (const doc of this.docs.find({})) {
      const cut = doc._id.lastIndexOf(":");
      if (cut < 0) continue;
      const owner = doc._id.slice(0, cut);
      const positions = chained.get(owner) ?? new Map<number, string>();
      positions.set(Number(doc._id.slice(cut + 1)), doc.ref);
      chained.set(owner, positions);
    }
    const legacy = new Map<string, Set<string>>();
    for await (const { owner, ref } of this.legacy()) {
      const refs = legacy.get(owner) ?? new Set<string>();
      refs.add(ref);
      legacy.set(owner, refs);
    }
    const inserts: Array<IdChainDoc & { owner: string; n: number }> = [];
    for (const [owner, refs] of legacy) {
      const positions = chained.get(owner) ?? new Map<number, string>();
      const listed = new Set<string>();
      let length = 0;
      while (positions.has(length + 1)) listed.add(positions.get(++length) ?? "");
      // what lies past a hole is not listed: added again after the unbroken start
      for (const [n, ref] of positions) if (n > length) refs.add(ref);
      let n = length + 1;
      for (const ref of refs) if (!listed.has(ref)) inserts.push({ _id: positionId(owner, n), ref, owner, n: n++ });
    }
    if (inserts.length > 0) {
      try {
        await this.docs.insertMany(inserts.map(({ _id, ref }) => ({ _id, ref })), { ordered: false });
      } catch (err) {
        const failed = (err as { writeErrors?: Array<{ index: number; code?: number }> }).writeErrors;
        if (!failed || failed.some((e) => e.code !== 11000)) throw err;
        for (const { index } of failed) {
          const taken = inserts[index];
          if (taken) await this.insertFrom(taken.owner, taken.n + 1, taken.ref);
        }
      }
    }
    try {
      await this.docs.insertOne({ _id: BACKFILLED, ref: "" });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
}
