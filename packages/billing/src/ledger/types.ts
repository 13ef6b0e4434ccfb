// The credit ledger: append-only entries; a user's balance is the running balance of their newest entry.
// All amounts are integer micro-dollars.

export type LedgerEntryKind =
  | "purchase" // credits bought (payment intent / checkout)
  | "bonus" // package bonus
  | "plan_credits" // monthly credits of a paid plan invoice
  | "refund" // credits taken back when the payment that granted them was refunded (negative)
  | "dispute" // credits taken back when a payment's funds were withdrawn by a dispute (negative), given back when reinstated
  | "adjustment" // manual, by an operator
  | "redemption" // a redemption code's credit (once per user and code)
  | "hold" // credits reserved by a gateway instance for the requests it serves (negative)
  | "settle" // one request's charge, drawn from a reservation (amount 0: the reservation already took the money; `cost` says how much; `meta`: the request's usage record)
  | "release" // unused reserved credits given back (positive)
  | "gap"; // a position a batched write of an older version left empty, filled by `npm run reconcile` (see gap-repair.ts)

/** A hole in a chain that `repairGaps` filled. */
export interface GapRepair {
  userId: string;
  /** the empty positions, first and last */
  from: number;
  to: number;
  /** what the entries after the hole had counted for the missing ones (micro-dollars, signed) */
  counted: number;
  /** the `adjustment` written at the end of the chain for it (0 when nothing was counted) */
  corrected: number;
}

export interface VerifyResult {
  ok: boolean;
  users: number;
  problems: string[];
}

export interface LedgerEntry {
  id: string;
  userId: string;
  seq: number;
  kind: LedgerEntryKind;
  /** signed change of the balance */
  amount: number;
  /** balance after this entry */
  balanceAfter: number;
  idempotencyKey: string;
  /** settle: the request's hold id */
  holdId?: string;
  /** hold/settle/release: the reservation they belong to */
  reservationId?: string;
  /** settle: what the request really cost */
  cost?: number;
  meta?: Record<string, unknown>;
  createdAt: Date;
}

export type CreditKind = "purchase" | "bonus" | "plan_credits" | "refund" | "dispute" | "adjustment" | "redemption";

/** The kinds that move credits outside requests: the billing history's entries. */
export const CREDIT_KINDS: readonly CreditKind[] = ["purchase", "bonus", "plan_credits", "refund", "dispute", "adjustment", "redemption"];

export interface CreditResult {
  /** false when the idempotency key was already used: nothing changed */
  applied: boolean;
  balance: number;
}

export interface DebitResult {
  /** false when the idempotency key was already used: nothing changed */
  applied: boolean;
  balance: number;
  /** what was taken (micro-dollars, positive): less than asked when the balance had less */
  taken: number;
  /** what the balance could not cover (also in the entry's meta as `shortfall`) */
  shortfall: number;
}

export type HoldResult = { ok: true; balance: number } | { ok: false; balance: number };

export interface Ledger {
  /** current balance in micro-dollars (0 for a user with no entries) */
  balance(userId: string): Promise<number>;
  /** adds credits exactly once per idempotency key (adjustments may be negative but never below zero) */
  credit(userId: string, amount: number, opts: { kind: CreditKind; idempotencyKey: string; meta?: Record<string, unknown> }): Promise<CreditResult>;
  /**
   * Takes `amount` (> 0) back exactly once per idempotency key, as far as the balance goes: when it has less
   * (credits already spent) what there is, the rest recorded as `shortfall` in the entry's meta. Unused credits this
   * instance reserved of the user are given back first, so they are taken too.
   */
  debit(userId: string, amount: number, opts: { kind: "refund" | "dispute"; idempotencyKey: string; meta?: Record<string, unknown> }): Promise<DebitResult>;
  /**
   * The user's credit entries (CREDIT_KINDS) written under these idempotency keys (those that exist), read by `_id`
   * from the newest back: the walk stops once every key is found, or below `afterSeq` (for keys only ever written
   * after the entry at that position).
   */
  creditEntriesByKeys(userId: string, keys: string[], opts?: { afterSeq?: number }): Promise<LedgerEntry[]>;
  /**
   * The entries written under these idempotency keys in any user's chain: a query on the whole ledger (a scan on the
   * embedded database), only for a caller that cannot know the user (see creditEntriesByKeys).
   */
  entriesByKeys(keys: string[]): Promise<LedgerEntry[]>;
  /** reserves `amount` when the balance covers it; never lets the balance go below zero */
  hold(userId: string, amount: number, opts: { holdId: string; meta?: Record<string, unknown> }): Promise<HoldResult>;
  /**
   * Closes a hold charging `cost`; exactly one settle/release per hold. Returns what was charged: a cost above the
   * hold is drawn from the rest of the user's credits this instance has reserved, topped up from the balance when
   * that is not enough (see `cover`), never taking the balance below zero. The `settle` entry is written within the flush interval, carrying `meta` (the gateway's usage record, plus
   * `uncharged` when part of the cost was not covered); without `meta`, a cost of 0 writes nothing.
   */
  settle(userId: string, holdId: string, cost: number, meta?: Record<string, unknown>): Promise<number>;
  /**
   * Grows an open hold to `cost` as far as the user's credits go (a top-up from the balance when this instance's
   * reservation falls short), for a caller that reports `chargeable` before settling; `settle` does it itself.
   */
  cover(userId: string, holdId: string, cost: number): Promise<void>;
  /** what `settle` would charge now for `cost` (synchronous, so a caller can report it before settling) */
  chargeable(userId: string, holdId: string, cost: number): number;
  /** closes a hold charging nothing */
  release(userId: string, holdId: string): Promise<void>;
  /** newest first */
  entries(userId: string, opts?: { limit?: number; beforeSeq?: number; kinds?: LedgerEntryKind[] }): Promise<LedgerEntry[]>;
  /** releases the reservations of instances that stopped beating (crashed); returns how many were released */
  releaseExpiredHolds(): Promise<number>;
  /**
   * Writes every settled charge and gives back unused reserved credits now (not only when idle), so that the stored
   * ledger sum equals `balance()` once no request is in flight. Runs on its own in the background and at shutdown.
   */
  flush(): Promise<void>;
  /** Writes one user's settled charges now, without giving back reserved credits (read-your-writes). */
  flushCharges(userId: string): Promise<void>;
  /**
   * Checks every user's chain (each balanceAfter = previous + amount, no gaps, never negative) from its last verified
   * checkpoint on, or from its beginning with `full` (chain-audit.ts).
   */
  verify(userId?: string, options?: { full?: boolean }): Promise<VerifyResult>;
  /** fills the holes an older version's batched writes left in chains (see gap-repair.ts); what it filled */
  repairGaps(userId?: string, options?: { full?: boolean }): Promise<GapRepair[]>;
  /** what this instance holds in memory now (monitoring) */
  stats(): LedgerStats;
  /**
   * Calls `listener` (synchronously, so it must only schedule work) after a flush wrote charges of a user: the
   * moment the stored balance after those charges is known. Returns a function that removes it.
   */
  onChargesWritten(listener: (userId: string) => void): () => void;
  /** stops background timers */
  close(): Promise<void>;
}

/** An instance's reservations at one moment. */
export interface LedgerStats {
  /** settled charges waiting for the next flush to write them */
  queuedEntries: number;
  /** holds open: requests between their hold and their settle or release */
  openHolds: number;
  /** credits reserved from the stored balances by this instance (micro-dollars), used or not */
  reservedMicros: number;
}
