import type { Collection } from "mongodb";
import type { Database } from "@gw/db";
import { entryId, LEDGER_COLLECTION, type LedgerDoc } from "./repository";
import { CREDIT_KINDS, type LedgerEntryKind } from "./types";

/**
 * Where a user's chain ended at some point: a hint, kept with `$max` after each write, best effort. A hint below the
 * head (a lost or raced update) only costs forward probes; it is never above the head, since it is written after the
 * entries it names.
 */
interface HeadHintDoc {
  _id: string;
  seq: number;
  /** the newest checkpoint's position (checkpoints.ts): the chain up to there is whole and verified */
  checkpoint?: number;
}

export const HEADS_COLLECTION = "ledger_heads";

/** Entries read at once when a walk goes backwards (concurrent `_id` lookups, pipelined over the driver's pool). */
const WALK_BATCH = 32;
/** Entries read at once when a range is read whole (checkpoints, the reconcile) */
const RANGE_BATCH = 128;

const CREDIT_KIND_SET = new Set<LedgerEntryKind>(CREDIT_KINDS);
export const isCreditKind = (kind: LedgerEntryKind): boolean => CREDIT_KIND_SET.has(kind);

/**
 * Reads one user's chain by `_id` only (`<userId>:<seq>`), so that every read costs what that user's entries cost,
 * whatever the size of the ledger: the embedded FerretDB looks up `_id` equality in its index and answers any other
 * filter by reading the whole collection. Chains are gap-free (see ChainWriter and gap-repair.ts), so the head is the
 * last position that exists: found from the hint by galloping forward and a binary search. The search starts at the
 * hint or the newest checkpoint, whichever is higher: below a checkpoint the chain is whole (a checkpoint is only
 * written over a segment without holes), so a hole an older version left there cannot mislead it.
 */
export class ChainReader {
  readonly entries: Collection<LedgerDoc>;
  private readonly hints: Collection<HeadHintDoc>;

  /** `collection`: the ledger's, or another chain of the same kind (a key's spend), whose hints are kept beside it */
  constructor(db: Database, collection = LEDGER_COLLECTION) {
    this.entries = db.connection.collection<LedgerDoc>(collection);
    this.hints = db.connection.collection<HeadHintDoc>(collection === LEDGER_COLLECTION ? HEADS_COLLECTION : `${collection}_heads`);
  }

  at(userId: string, seq: number): Promise<LedgerDoc | null> {
    return this.entries.findOne({ _id: entryId(userId, seq) });
  }

  /** The newest entry of the chain (null for a user without entries). */
  async head(userId: string): Promise<LedgerDoc | null> {
    const hint = await this.hints.findOne({ _id: userId });
    const from = Math.max(hint?.seq ?? 0, hint?.checkpoint ?? 0);
    let known: LedgerDoc | null = from > 0 ? await this.at(userId, from) : null;
    let low = known?.seq ?? 0;
    let step = 1;
    let high: number;
    // gallop: low exists (or is 0), find a position that does not
    for (;;) {
      const doc = await this.at(userId, low + step);
      if (!doc) {
        high = low + step;
        break;
      }
      known = doc;
      low = doc.seq;
      step *= 2;
    }
    // binary search: low exists (or is 0), high does not
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      const doc = await this.at(userId, mid);
      if (doc) {
        known = doc;
        low = mid;
      } else {
        high = mid;
      }
    }
    return known;
  }

  /**
   * Best effort: the head hint (or the newest checkpoint's position) moves up to `seq`, never down. Two first writers
   * racing on the upsert: the loser updates the winner's. The database gone: the hint stays lower, which is safe.
   */
  async advance(userId: string, seq: number, field: "seq" | "checkpoint" = "seq"): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.hints.updateOne({ _id: userId }, { $max: { [field]: seq } }, { upsert: true });
        return;
      } catch {
        // try once more
      }
    }
  }

  /** The users with a chain: those with a head hint (one document per user, written with their first entries). */
  async userIds(): Promise<string[]> {
    return (await this.hints.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
  }

  /** The entries at positions `from`..`to` that exist, in order, read by `_id` in concurrent batches. */
  async range(userId: string, from: number, to: number): Promise<LedgerDoc[]> {
    const found: LedgerDoc[] = [];
    for (let low = from; low <= to; low += RANGE_BATCH) {
      const seqs: number[] = [];
      for (let seq = low; seq <= Math.min(to, low + RANGE_BATCH - 1); seq++) seqs.push(seq);
      for (const doc of await Promise.all(seqs.map((seq) => this.at(userId, seq)))) if (doc) found.push(doc);
    }
    return found;
  }

  /**
   * The chain from `fromSeq` down to 1, newest first, read by `_id` in concurrent batches; stops when the caller
   * returns false. A position that does not exist (a hole a reconcile has not filled yet) is skipped.
   */
  async walkBack(userId: string, fromSeq: number, visit: (doc: LedgerDoc) => boolean): Promise<void> {
    for (let top = fromSeq; top >= 1; top -= WALK_BATCH) {
      const seqs: number[] = [];
      for (let seq = top; seq > Math.max(0, top - WALK_BATCH); seq--) seqs.push(seq);
      const docs = await Promise.all(seqs.map((seq) => this.at(userId, seq)));
      for (const doc of docs) if (doc && !visit(doc)) return;
    }
  }
}
