import type { Collection } from "mongodb";
import type { Clock } from "@gw/shared";
import type { Database } from "@gw/db";
import { ChainFold, EMPTY_CHAIN, sumsOf, type ChainSums, type CheckpointDoc, type Checkpoints } from "./checkpoints";
import type { ChainWriter } from "./chain-writer";
import { fillHole } from "./gap-repair";
import { INSERT_CHUNK, type LedgerDoc, type LedgerRepository } from "./repository";
import type { GapRepair, VerifyResult } from "./types";

/**
 * What `npm run reconcile` verified: per user, the newest checkpoint up to which the chain verified (`seq`); and one
 * document (ALL_USERS) once a run found every user with a chain, so that later runs list them from the head hints.
 */
interface VerifiedDoc {
  _id: string;
  seq: number;
}

export const VERIFIED_COLLECTION = "ledger_verified";
const ALL_USERS = "*all-users";

export interface AuditOptions {
  /** one user's chain only */
  userId?: string;
  /** from each chain's first entry, every user found with a query on the whole collection (see `users`) */
  full?: boolean;
}

/**
 * The reconcile's reads of the ledger. A run verifies each chain from its last verified checkpoint on (the whole chain
 * the first time, or with `full`), by `_id`, and writes or checks the checkpoints it passes; entries older than that
 * checkpoint were verified by an earlier run and are not read again: a change made to them since is found by a `full`
 * run (their running sums, or the checkpoint's digest of their money fields, no longer agree).
 */
export class ChainAudit {
  private readonly verified: Collection<VerifiedDoc>;

  constructor(db: Database, private readonly repo: LedgerRepository, private readonly checkpoints: Checkpoints, private readonly writer: ChainWriter, private readonly clock: Clock) {
    this.verified = db.connection.collection<VerifiedDoc>(VERIFIED_COLLECTION);
  }

  /** Fills the holes an older version's batched writes left (gap-repair.ts) in the part of each chain a run reads. */
  async repairGaps(opts: AuditOptions): Promise<GapRepair[]> {
    const repaired: GapRepair[] = [];
    for (const userId of await this.users(opts)) {
      const start = await this.start(userId, opts.full);
      let before = { seq: start.seq, balance: start.balance };
      for (const doc of await this.read(userId, start.seq)) {
        if (doc.seq > before.seq + 1) repaired.push(await fillHole(this.repo, this.writer, this.clock, userId, before, doc));
        before = { seq: doc.seq, balance: doc.balanceAfter };
      }
    }
    return repaired;
  }

  /**
   * The ledger invariant (checkpoints.ts, foldEntry) on each chain from its last verified checkpoint on, and each
   * checkpoint passed equal to what its entries add up to (written when missing); the last one that verified becomes
   * the chain's start for the next run.
   */
  async verify(opts: AuditOptions): Promise<VerifyResult> {
    const users = await this.users(opts);
    const problems: string[] = [];
    for (const userId of users) {
      const fold = new ChainFold(userId, await this.start(userId, opts.full));
      let verifiedUpTo = 0;
      for (const doc of await this.read(userId, fold.sums.seq)) {
        const checkpoint = fold.add(doc);
        if (!checkpoint) continue;
        const stored = await this.checkpoints.insert(checkpoint);
        if (sameSums(stored, checkpoint)) verifiedUpTo = checkpoint.seq;
        else fold.problems.push(`${userId}: checkpoint at seq ${checkpoint.seq} does not match the entries before it`);
      }
      problems.push(...fold.problems);
      if (fold.sums.seq > 0) await this.repo.reader.advance(userId, fold.sums.seq);
      if (verifiedUpTo > 0) await this.verified.updateOne({ _id: userId }, { $max: { seq: verifiedUpTo } }, { upsert: true });
    }
    if (!opts.userId) await this.verified.updateOne({ _id: ALL_USERS }, { $max: { seq: users.length } }, { upsert: true });
    return { ok: problems.length === 0, users: users.length, problems };
  }

  /**
   * The users to check: from the head hints (one document per user) once a run has listed every user; before that
   * (chains older than the hints) and with `full`, also from a query on the whole ledger collection. A chain's first
   * write leaves its hint, so only a chain whose one write the database lost the hint of waits for a `full` run.
   */
  private async users(opts: AuditOptions): Promise<string[]> {
    if (opts.userId) return [opts.userId];
    const hinted = await this.repo.reader.userIds();
    if (!opts.full && (await this.verified.findOne({ _id: ALL_USERS }))) return hinted;
    return [...new Set([...hinted, ...(await this.repo.userIds())])].sort();
  }

  /** Where a run starts on a chain: its last verified checkpoint, or its beginning (`full`, or none yet). */
  private async start(userId: string, full = false): Promise<ChainSums> {
    const verified = full ? null : await this.verified.findOne({ _id: userId });
    const checkpoint = verified ? await this.checkpoints.at(userId, verified.seq) : null;
    return checkpoint ? sumsOf(checkpoint) : EMPTY_CHAIN;
  }

  /**
   * The chain's entries after `from`, by `_id`: up to the head, then on while entries follow within INSERT_CHUNK
   * positions (the longest hole a batched write could leave, which a head search may have stopped at).
   */
  private async read(userId: string, from: number): Promise<LedgerDoc[]> {
    const head = (await this.repo.reader.head(userId))?.seq ?? 0;
    const docs = await this.repo.reader.range(userId, from + 1, head);
    for (let end = Math.max(head, from); ;) {
      const more = await this.repo.reader.range(userId, end + 1, end + INSERT_CHUNK);
      const last = more[more.length - 1];
      if (!last) return docs;
      docs.push(...more);
      end = last.seq;
    }
  }
}

const sameSums = (a: CheckpointDoc, b: CheckpointDoc): boolean => JSON.stringify(sumsOf(a)) === JSON.stringify(sumsOf(b));
