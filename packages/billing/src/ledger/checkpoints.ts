import { createHash } from "node:crypto";
import type { Collection } from "mongodb";
import { isDuplicateKey, type Database } from "@gw/db";
import { isCreditKind, type ChainReader } from "./chain-reader";
import { CREDIT_SKIP, entryId, type LedgerDoc } from "./repository";

/** Positions between two checkpoints of a chain: a checkpoint sits at every multiple of it. */
export const CHECKPOINT_EVERY = 1_024;

export const CHECKPOINTS_COLLECTION = "ledger_checkpoints";

/** What a chain adds up to at one of its positions (all amounts micro-dollars). */
export interface ChainSums {
  seq: number;
  balance: number;
  /** the newest credit entry's position at or before `seq` (0 for none) */
  lastCredit: number;
  /** the sum of the positive amounts, and of the negative ones (≤ 0) */
  credited: number;
  debited: number;
  /** the sum of the settles' `cost` (the requests' charges) */
  charged: number;
  /** SHA-256 (hex) of the previous checkpoint's digest and the money fields of the entries since */
  digest: string;
}

/**
 * A chain's sums at position `seq` (a multiple of CHECKPOINT_EVERY), stored once, never changed: `_id` is the entry's
 * own (`<userId>:<seq>`), and its content follows from the entries alone, so writers that get there at once insert the
 * same document and the unique `_id` keeps one.
 */
export interface CheckpointDoc extends ChainSums {
  _id: string;
  userId: string;
}

export const EMPTY_CHAIN: ChainSums = { seq: 0, balance: 0, lastCredit: 0, credited: 0, debited: 0, charged: 0, digest: "" };

/**
 * The ledger invariant, checked entry by entry from the sums before `doc`: positions contiguous, each balanceAfter
 * the running sum, never negative, the history's links right (absent on entries older than them). Returns the sums
 * after it; what does not hold goes to `problems`.
 */
export function foldEntry(userId: string, sums: ChainSums, doc: LedgerDoc, problems: string[]): ChainSums {
  const expected = sums.seq + 1;
  if (doc.seq !== expected) problems.push(`${userId}: gap or duplicate at seq ${doc.seq} (expected ${expected})`);
  const balance = sums.balance + doc.amount;
  if (doc.balanceAfter !== balance) problems.push(`${userId}: seq ${doc.seq} balanceAfter ${doc.balanceAfter} != running sum ${balance}`);
  if (doc.balanceAfter < 0) problems.push(`${userId}: seq ${doc.seq} negative balance ${doc.balanceAfter}`);
  let lastCredit = sums.lastCredit;
  if (isCreditKind(doc.kind)) {
    if (doc.prevCredit !== undefined && doc.prevCredit !== lastCredit) problems.push(`${userId}: seq ${doc.seq} prevCredit ${doc.prevCredit} != ${lastCredit}`);
    lastCredit = doc.seq;
  }
  if (doc.lastCredit !== undefined && doc.lastCredit !== lastCredit) problems.push(`${userId}: seq ${doc.seq} lastCredit ${doc.lastCredit} != ${lastCredit}`);
  return {
    seq: doc.seq,
    balance,
    lastCredit,
    credited: sums.credited + Math.max(doc.amount, 0),
    debited: sums.debited + Math.min(doc.amount, 0),
    charged: sums.charged + (doc.kind === "settle" ? doc.cost ?? 0 : 0),
    digest: sums.digest,
  };
}

/** The digest of a segment: the one before, then each entry's money fields (what a tamper with money would change). */
export function segmentDigest(before: string, docs: readonly LedgerDoc[]): string {
  const hash = createHash("sha256").update(before);
  for (const d of docs) hash.update(`\n${d.seq}|${d.kind}|${d.amount}|${d.balanceAfter}|${d.cost ?? ""}|${d.idempotencyKey}|${d.reservationId ?? ""}`);
  return hash.digest("hex");
}

/**
 * Folds a chain's entries, in order, from the sums at some position (a checkpoint, or the empty chain): checks each
 * (foldEntry) and shapes the checkpoint each multiple of CHECKPOINT_EVERY completes while everything verified. The one
 * place a checkpoint is shaped (writers, the reconcile and the bench's seeding use it).
 */
export class ChainFold {
  readonly problems: string[] = [];
  private segment: LedgerDoc[] = [];
  /** the newest credit positions this fold has verified, newest first (a credit's skip list must agree with them) */
  private credits: number[];

  constructor(readonly userId: string, public sums: ChainSums) {
    this.credits = sums.lastCredit > 0 ? [sums.lastCredit] : [];
  }

  /** Folds the next entry; returns the checkpoint it completes, if the chain verified so far. */
  add(doc: LedgerDoc): CheckpointDoc | undefined {
    if (isCreditKind(doc.kind)) {
      if (doc.credits) this.checkSkipList(doc, doc.credits);
      this.credits = [doc.seq, ...this.credits].slice(0, CREDIT_SKIP);
    }
    this.sums = foldEntry(this.userId, this.sums, doc, this.problems);
    this.segment.push(doc);
    if (this.sums.seq % CHECKPOINT_EVERY !== 0) return undefined;
    this.sums = { ...this.sums, digest: segmentDigest(this.sums.digest, this.segment) };
    this.segment = [];
    return this.problems.length === 0 ? { _id: entryId(this.userId, this.sums.seq), userId: this.userId, ...this.sums } : undefined;
  }

  /**
   * A credit's skip list: newest first, at most CREDIT_SKIP, equal to the verified credit positions as far as they
   * go, and empty only for a chain's first credit (a reader stops at an empty list).
   */
  private checkSkipList(doc: LedgerDoc, credits: number[]): void {
    const wrong = credits.length > CREDIT_SKIP || (credits.length === 0 && this.credits.length > 0) || credits.some((seq, i) => (i < this.credits.length ? seq !== this.credits[i] : seq <= 0 || seq >= (credits[i - 1] ?? doc.seq)));
    if (wrong) this.problems.push(`${this.userId}: seq ${doc.seq} credits [${credits.join(",")}] != [${this.credits.join(",")}]`);
  }
}

/** The sums a checkpoint holds, without its identity. */
export const sumsOf = ({ seq, balance, lastCredit, credited, debited, charged, digest }: ChainSums): ChainSums => ({ seq, balance, lastCredit, credited, debited, charged, digest });

/**
 * The ledger's checkpoints: written by `npm run reconcile` as it verifies a chain past a multiple of CHECKPOINT_EVERY,
 * or on demand (`ensure`, from the checkpoint before and the entries since, read by `_id`). Not by the writer: folding
 * a segment costs a read per entry, which on the request path's instance cost a fifth more CPU per request. A segment
 * that does not verify (a hole, a wrong sum) gets none: the reconcile reports it.
 */
export class Checkpoints {
  readonly collection: Collection<CheckpointDoc>;
  private readonly inFlight = new Map<string, Promise<CheckpointDoc | null>>();

  constructor(db: Database, private readonly reader: ChainReader) {
    this.collection = db.connection.collection<CheckpointDoc>(CHECKPOINTS_COLLECTION);
  }

  at(userId: string, seq: number): Promise<CheckpointDoc | null> {
    return this.collection.findOne({ _id: entryId(userId, seq) });
  }

  /**
   * Inserts a checkpoint; another writer's (the same content) may be there first. Returns the stored one, which
   * differs from `doc` only when the entries changed after it was written (a reconcile reports that).
   */
  async insert(doc: CheckpointDoc): Promise<CheckpointDoc> {
    try {
      await this.collection.insertOne(doc);
      await this.reader.advance(doc.userId, doc.seq, "checkpoint");
      return doc;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return (await this.at(doc.userId, doc.seq)) ?? doc;
    }
  }

  /**
   * The checkpoint at `seq` (a multiple of CHECKPOINT_EVERY), written now if missing, from the one before (itself
   * written first when missing: a chain older than checkpoints is folded once) and the entries between. Null when a
   * segment does not verify. One at a time per user and position.
   */
  ensure(userId: string, seq: number): Promise<CheckpointDoc | null> {
    const key = entryId(userId, seq);
    let running = this.inFlight.get(key);
    if (!running) {
      running = this.build(userId, seq).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, running);
    }
    return running;
  }

  private async build(userId: string, seq: number): Promise<CheckpointDoc | null> {
    const existing = await this.at(userId, seq);
    if (existing || seq <= 0) return existing;
    const before = seq === CHECKPOINT_EVERY ? EMPTY_CHAIN : await this.ensure(userId, seq - CHECKPOINT_EVERY);
    if (!before) return null;
    const fold = new ChainFold(userId, sumsOf(before));
    let checkpoint: CheckpointDoc | undefined;
    for (const doc of await this.reader.range(userId, before.seq + 1, seq)) checkpoint = fold.add(doc);
    return checkpoint?.seq === seq ? this.insert(checkpoint) : null;
  }
}
