import type { Connection, mongo } from "mongoose";
import { isDuplicateKey } from "./duplicate-key";

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
/** Positions read at once by `list` from the start: the first batch, doubled each time up to the last. */
const FIRST_BATCH = 4;
const MAX_BATCH = 64;
/** Owners whose chain start this process remembers (cleared when full: a forgotten owner costs a longer read). */
const MAX_REMEMBERED = 10_000;

const positionId = (owner: string, n: number): string => `${owner}:${n}`;


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
   * The refs at each owner's first positions as this process has read or written them. Positions are insert-only, so
   * what was seen once stays true: a read goes on after it, an append tries the position after it first.
   */
  private readonly seen = new Map<string, string[]>();

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
    return [...new Set(await this.read(owner))];
  }

  /** The documents of `collection` the owner's refs name, oldest first, each once; those missing are left out. */
  documents<T extends { _id: string }>(owner: string, collection: mongo.Collection<T>): Promise<T[]> {
    return this.resolve(owner, (ref) => collection.findOne({ _id: ref } as mongo.Filter<T>) as Promise<T | null>);
  }

  /**
   * What `lookUp` gives for each of the owner's refs, oldest first, each ref once; nulls are left out. Each lookup
   * starts as soon as its position is read, not after the whole chain.
   */
  async resolve<T>(owner: string, lookUp: (ref: string) => Promise<T | null>): Promise<T[]> {
    await this.ready();
    const lookups = new Map<string, Promise<T | null>>();
    const start = (ref: string) => {
      if (lookups.has(ref)) return;
      const lookup = lookUp(ref);
      lookup.catch(() => undefined); // awaited below unless the chain read fails or the ref lies past a hole
      lookups.set(ref, lookup);
    };
    const found: T[] = [];
    for (const ref of new Set(await this.read(owner, start))) {
      const value = await lookups.get(ref);
      if (value !== null && value !== undefined) found.push(value);
    }
    return found;
  }

  /**
   * Adds `ref` at the owner's first free position (another writer's position is skipped): the one after those this
   * process has seen, else the one a search from the start finds.
   */
  async append(owner: string, ref: string): Promise<void> {
    await this.ready();
    const seen = this.seen.get(owner)?.length;
    await this.appendFrom(owner, (seen ?? (await this.length(owner, 0))) + 1, ref);
  }

  /** `append` for an owner whose chain is new (a fresh secret's hash): position 1 is tried without a read first. */
  async appendToNew(owner: string, ref: string): Promise<void> {
    await this.ready();
    await this.appendFrom(owner, 1, ref);
  }

  /** The ref at the owner's first position (a chain of one: the key a secret's hash opens), or null. */
  async first(owner: string): Promise<string | null> {
    await this.ready();
    const seen = this.seen.get(owner)?.[0];
    if (seen !== undefined) return seen;
    const ref = (await this.docs.findOne({ _id: positionId(owner, 1) }))?.ref ?? null;
    if (ref !== null) this.remember(owner, [ref]);
    return ref;
  }

  /** `append` unless the ref is listed already (an idempotent add, for refs that a retried write may add again). */
  async add(owner: string, ref: string): Promise<void> {
    const refs = await this.list(owner);
    if (!refs.includes(ref)) await this.appendFrom(owner, refs.length + 1, ref);
  }

  /**
   * Inserts `ref` at `from`, the position thought free (no read first); when another writer holds it, at the first
   * free position after the last that exists.
   */
  private async appendFrom(owner: string, from: number, ref: string): Promise<void> {
    for (let n = from; ; n = (await this.length(owner, n)) + 1) {
      if (await this.insertAt(owner, n, ref)) return;
    }
  }

  /** Inserts `ref` at the first free position from `from` on, one after another (a hole before the last is filled). */
  private async insertFrom(owner: string, from: number, ref: string): Promise<void> {
    for (let n = from; !(await this.insertAt(owner, n, ref)); n++);
  }

  /** Inserts `ref` at position n; false when that position is taken. */
  private async insertAt(owner: string, n: number, ref: string): Promise<boolean> {
    try {
      await this.docs.insertOne({ _id: positionId(owner, n), ref });
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
    const seen = this.seen.get(owner) ?? [];
    if (seen.length === n - 1) this.remember(owner, [...seen, ref]);
    return true;
  }

  /**
   * The refs at positions 1, 2, … up to the first that does not exist (chains have no holes): those seen before at
   * once, the rest in growing concurrent batches. `found` is given each ref as soon as its position is read.
   */
  private async read(owner: string, found: (ref: string) => void = () => undefined): Promise<string[]> {
    const refs = [...(this.seen.get(owner) ?? [])];
    refs.forEach(found);
    // past a start seen before, one position first: a chain seldom grows between two reads
    for (let size = refs.length > 0 ? 1 : FIRST_BATCH; ; size = Math.min(size * 2, MAX_BATCH)) {
      const next = refs.length + 1;
      const batch = await Promise.all(Array.from({ length: size }, async (_, i) => {
        const doc = await this.docs.findOne({ _id: positionId(owner, next + i) });
        if (doc) found(doc.ref);
        return doc;
      }));
      for (const doc of batch) {
        if (!doc) {
          this.remember(owner, refs);
          return refs;
        }
        refs.push(doc.ref);
      }
    }
  }

  private remember(owner: string, refs: string[]): void {
    if (refs.length === 0) return;
    if (this.seen.size >= MAX_REMEMBERED && !this.seen.has(owner)) this.seen.clear();
    this.seen.set(owner, refs);
  }

  /** The last position that exists: galloping forward from `from` (0, or one that exists), then a binary search. */
  private async length(owner: string, from: number): Promise<number> {
    const exists = async (n: number) => (await this.docs.findOne({ _id: positionId(owner, n) }, { projection: { _id: 1 } })) !== null;
    let low = from;
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
