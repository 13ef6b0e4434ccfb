import type { Clock } from "@gw/shared";
import { isCreditKind } from "./chain-reader";
import { CREDIT_SKIP, creditsFrom, entryId, INSERT_CHUNK, type Head, type LedgerDoc, type LedgerRepository } from "./repository";
import type { LedgerEntryKind } from "./types";

/** One balance movement waiting to be appended to a user's chain. */
export interface Movement {
  kind: LedgerEntryKind;
  amount: number;
  idempotencyKey: string;
  /** refuse (instead of append) when the balance would go below zero */
  requireCover: boolean;
  /**
   * A debit (negative amount) that takes what the balance has when it has less, rather than being refused; what it
   * could not take is recorded as `shortfall` in the entry's meta.
   */
  upToBalance?: boolean;
  /** the lowest balance `requireCover` and `upToBalance` allow (default 0); a key's spend chain goes down to -limit */
  floor?: number;
  holdId?: string;
  cost?: number;
  reservationId?: string;
  meta?: Record<string, unknown>;
}

export type MovementOutcome =
  /** `amount`: what the entry changed (less than asked for an `upToBalance` debit the balance did not cover) */
  | { status: "applied"; balance: number; amount: number }
  /** the idempotency key was used before: nothing changed */
  | { status: "duplicate"; balance: number }
  /** requireCover and the balance does not cover it */
  | { status: "refused"; balance: number };

interface Pending {
  movement: Movement;
  resolve: (outcome: MovementOutcome) => void;
  reject: (err: unknown) => void;
}

interface UserQueue {
  pending: Pending[];
  running: boolean;
}

/** one insert command per batch (see INSERT_CHUNK) */
const MAX_BATCH = INSERT_CHUNK;
const MAX_ATTEMPTS = 200;

/**
 * Appends movements to per-user ledger chains. Each entry's position (`<user>:<seq>`) is its primary key, so
 * appending is a plain insert and concurrent writers — in this process or another instance — can never both take
 * the same position: the loser re-reads the head and tries again (optimistic concurrency on an atomic insert).
 * That needs no multi-document transaction and no atomic read-modify-write, which FerretDB lacks.
 *
 * Within one process, a user's movements are queued and committed in groups with one ordered insertMany
 * (group commit), so a busy user costs one round trip per batch rather than per request.
 */
export class ChainWriter {
  private readonly queues = new Map<string, UserQueue>();
  /** last known head per user; a stale head only costs a retry */
  private readonly heads = new Map<string, Head>();

  /** `onInserted`: told of each run of entries inserted, in order, once they are in (it must not throw) */
  constructor(private readonly repo: LedgerRepository, private readonly clock: Clock, private readonly onInserted?: (docs: readonly LedgerDoc[]) => void) {}

  append(userId: string, movement: Movement): Promise<MovementOutcome> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(userId);
      if (!queue) {
        queue = { pending: [], running: false };
        this.queues.set(userId, queue);
      }
      queue.pending.push({ movement, resolve, reject });
      if (!queue.running) void this.drain(userId, queue);
    });
  }

  async head(userId: string): Promise<Head> {
    const head = await this.repo.head(userId);
    this.heads.set(userId, head);
    return head;
  }

  /** Drops cached heads (tests, or after a failure). */
  forget(userId?: string): void {
    if (userId) this.heads.delete(userId);
    else this.heads.clear();
  }

  private async drain(userId: string, queue: UserQueue): Promise<void> {
    queue.running = true;
    try {
      while (queue.pending.length > 0) {
        const batch = queue.pending.splice(0, MAX_BATCH);
        try {
          await this.commit(userId, batch);
        } catch (err) {
          this.heads.delete(userId);
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      queue.running = false;
      if (queue.pending.length === 0) this.queues.delete(userId);
    }
  }

  private async commit(userId: string, batch: Pending[]): Promise<void> {
    let remaining = batch;
    let fresh = false;
    for (let attempt = 0; attempt < MAX_ATTEMPTS && remaining.length > 0; attempt++) {
      let head = this.heads.get(userId);
      if (!head) {
        head = await this.head(userId);
        fresh = true;
      }
      // a chain whose head predates the credit links: found once, then carried by every entry
      if (head.lastCredit === undefined) head = { ...head, lastCredit: await this.repo.legacyLastCredit(userId, head.seq) };
      // a credit's skip list: the newest credit's own list, read once per head loaded (credits are rare)
      if (head.recentCredits === undefined && remaining.some((p) => isCreditKind(p.movement.kind))) head = { ...head, recentCredits: await this.recentCredits(userId, head.lastCredit ?? 0) };
      const plan = this.plan(userId, head, remaining);
      // A refusal decided on a cached head might be wrong (another instance may have credited): confirm on a fresh one.
      if (plan.refused.length > 0 && !fresh) {
        this.heads.delete(userId);
        continue;
      }
      for (const { pending, balance } of plan.refused) pending.resolve({ status: "refused", balance });
      if (plan.docs.length === 0) return;

      const outcome = await this.repo.insertChain(plan.docs);
      const inserted = outcome.ok ? plan.docs : plan.docs.slice(0, outcome.inserted);
      if (inserted.length > 0) this.onInserted?.(inserted);
      if (outcome.ok) {
        this.heads.set(userId, plan.nextHead);
        plan.accepted.forEach((p, i) => p.resolve({ status: "applied", balance: plan.docs[i]?.balanceAfter ?? 0, amount: plan.docs[i]?.amount ?? 0 }));
        return;
      }
      // Entries before the conflict are in; settle them and retry the rest from a fresh head.
      plan.accepted.slice(0, outcome.inserted).forEach((p, i) => p.resolve({ status: "applied", balance: inserted[i]?.balanceAfter ?? 0, amount: inserted[i]?.amount ?? 0 }));
      const conflicting = plan.accepted[outcome.inserted];
      const rest = plan.accepted.slice(outcome.inserted + 1);
      remaining = rest;
      this.heads.delete(userId);
      fresh = false;
      const planned = plan.docs[outcome.inserted];
      if (conflicting && planned) {
        // Which unique key the insert hit, read by `_id`: its position, taken by another writer (there, unless this
        // is the entry's own earlier try), or its idempotency key, used before (the position is then still empty).
        const atPosition = await this.repo.reader.at(userId, planned.seq);
        if (!atPosition || atPosition.idempotencyKey === planned.idempotencyKey) {
          const current = await this.head(userId);
          fresh = true;
          conflicting.resolve({ status: "duplicate", balance: current.balance });
        } else {
          // The position was taken by another writer: this movement goes again with the rest.
          remaining = [conflicting, ...rest];
        }
      }
      if (attempt > 2) await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
    }
    if (remaining.length > 0) throw new Error(`ledger: could not append for ${userId} after ${MAX_ATTEMPTS} attempts`);
  }

  /** The newest credit positions, newest first, from the credit entry at `lastCredit` (0: none). */
  private async recentCredits(userId: string, lastCredit: number): Promise<number[]> {
    if (lastCredit === 0) return [];
    const doc = await this.repo.reader.at(userId, lastCredit);
    return doc && isCreditKind(doc.kind) ? creditsFrom(doc) : [lastCredit];
  }

  private plan(userId: string, head: Head, pendings: Pending[]) {
    const docs: LedgerDoc[] = [];
    const accepted: Pending[] = [];
    const refused: Array<{ pending: Pending; balance: number }> = [];
    const state: ChainState = { seq: head.seq, balance: head.balance, lastCredit: head.lastCredit ?? 0, recentCredits: head.recentCredits };
    const seen = new Set<string>();
    const now = new Date(this.clock.now());
    for (const pending of pendings) {
      const m = pending.movement;
      // Two movements with one key in one batch: the second is a duplicate of the first.
      if (seen.has(m.idempotencyKey)) {
        pending.resolve({ status: "duplicate", balance: state.balance });
        continue;
      }
      const floor = m.floor ?? 0;
      if (m.requireCover && state.balance + m.amount < floor) {
        refused.push({ pending, balance: state.balance });
        continue;
      }
      seen.add(m.idempotencyKey);
      const doc = nextEntry(userId, state, m, now);
      docs.push(doc);
      accepted.push(pending);
    }
    return { docs, accepted, refused, nextHead: { ...state } };
  }
}

/** Where a chain ends while entries are planned after it. */
export interface ChainState {
  seq: number;
  balance: number;
  lastCredit: number;
  /** the newest credit positions, newest first (the next credit's skip list); undefined: only `lastCredit` is known */
  recentCredits?: number[];
}

/**
 * The entry that appends movement `m` after `state` (which it advances): the one place a stored entry is shaped (the
 * bench seeds its ledgers with it too).
 */
export function nextEntry(userId: string, state: ChainState, m: Movement, now: Date): LedgerDoc {
  // decided on the head this batch is inserted after: a stale head loses the position and is planned again
  const amount = m.upToBalance ? Math.max(m.amount, -Math.max(state.balance - (m.floor ?? 0), 0)) : m.amount;
  const meta = amount === m.amount ? m.meta : { ...m.meta, shortfall: amount - m.amount };
  state.seq += 1;
  state.balance += amount;
  const doc: LedgerDoc = {
    _id: entryId(userId, state.seq),
    userId,
    seq: state.seq,
    kind: m.kind,
    amount,
    balanceAfter: state.balance,
    idempotencyKey: m.idempotencyKey,
    createdAt: now,
  };
  if (isCreditKind(m.kind)) {
    doc.prevCredit = state.lastCredit;
    doc.credits = (state.recentCredits ?? (state.lastCredit > 0 ? [state.lastCredit] : [])).slice(0, CREDIT_SKIP);
    state.lastCredit = state.seq;
    state.recentCredits = creditsFrom(doc);
  }
  doc.lastCredit = state.lastCredit;
  if (m.holdId !== undefined) doc.holdId = m.holdId;
  if (m.cost !== undefined) doc.cost = m.cost;
  if (m.reservationId !== undefined) doc.reservationId = m.reservationId;
  if (meta !== undefined) doc.meta = meta;
  return doc;
}
