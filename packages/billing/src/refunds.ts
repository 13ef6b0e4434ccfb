import type { LedgerEntry } from "./ledger/types";
import type { BillingRuntime } from "./runtime";

/** What one money object (a purchase, an invoice) granted: its ledger grant entries, summed. */
export interface Grant {
  userId: string;
  /** the idempotency key of its main grant entry (`purchase:<id>`, `inv:<invoice id>`): the money object's name */
  key: string;
  /** the position of its main grant entry in the user's chain: whatever is taken back for it is written after it */
  seq: number;
  /** micro-dollars granted in all (a purchase's credits and bonus) */
  micros: number;
}

/** A dispute of `disputedCents` of a charge of `amountCents`. */
export interface DisputedShare {
  disputeId: string;
  amountCents: number;
  disputedCents: number;
}

/** The take-back of a charge whose refunded amount is `refundedCents` of `amountCents` in all (cumulative). */
export interface RefundedShare {
  chargeId: string;
  amountCents: number;
  refundedCents: number;
}

/** Bounds the walk along a money object's take-backs and the retries of one that lost a race. */
const MAX_STEPS = 1_000;
const MAX_ATTEMPTS = 10;

/** Each take-back builds on the refunded amount before it: its key names that amount, so it is taken once. */
const stepKey = (grantKey: string, fromCents: number): string => `${grantKey}:refund:from:${fromCents}`;

const disputeKey = (grantKey: string, disputeId: string): string => `${grantKey}:dispute:${disputeId}`;
const reinstatedKey = (grantKey: string, disputeId: string): string => `${disputeKey(grantKey, disputeId)}:reinstated`;
/** The give-back of a withdrawal that a reinstatement racing it did not see. */
const lateReinstatedKey = (grantKey: string, disputeId: string): string => `${reinstatedKey(grantKey, disputeId)}:late`;

/** floor(micros × cents / total) without leaving integers (the product can pass 2^53). */
const shareOf = (micros: number, cents: number, totalCents: number): number =>
  Number((BigInt(micros) * BigInt(cents)) / BigInt(totalCents));

function grantAmong(entries: LedgerEntry[], key: string): Grant | null {
  const main = entries.find((e) => e.idempotencyKey === key);
  if (!main) return null;
  return { userId: main.userId, key, seq: main.seq, micros: entries.reduce((sum, e) => sum + e.amount, 0) };
}

/**
 * The money object's grant in the user's chain (read by `_id`), or null when none of these ledger keys granted
 * anything there. `keys`: the main grant entry's first, then those of the entries written after it.
 */
export async function grantOf(rt: BillingRuntime, userId: string, keys: [string, ...string[]]): Promise<Grant | null> {
  return grantAmong(await rt.ledger.creditEntriesByKeys(userId, keys), keys[0]);
}

/** The same, for a money object whose user nothing names: a query on the whole ledger (see Ledger.entriesByKeys). */
export async function grantOfAnyUser(rt: BillingRuntime, keys: [string, ...string[]]): Promise<Grant | null> {
  return grantAmong(await rt.ledger.entriesByKeys(keys), keys[0]);
}

/** The grant's entries under these keys: its take-backs, all written after its main entry. */
const takeBacksOf = (rt: BillingRuntime, grant: Grant, keys: string[]): Promise<LedgerEntry[]> =>
  rt.ledger.creditEntriesByKeys(grant.userId, keys, { afterSeq: grant.seq });

/** The cumulative refunded amount already taken back for this grant: the end of its chain of take-backs. */
async function takenUpTo(rt: BillingRuntime, grant: Grant): Promise<number> {
  let cents = 0;
  for (let step = 0; step < MAX_STEPS; step++) {
    const [entry] = await takeBacksOf(rt, grant, [stepKey(grant.key, cents)]);
    const next = entry?.meta?.refundedCents;
    if (typeof next !== "number" || next <= cents) return cents;
    cents = next;
  }
  return cents;
}

function logShortfall(rt: BillingRuntime, grant: Grant, shortfall: number, about: Record<string, string>): void {
  if (shortfall > 0) rt.logger.warn({ userId: grant.userId, grant: grant.key, shortfall, ...about }, "credits taken back were already spent: shortfall recorded");
}

/**
 * Takes back the share of a grant that a charge's cumulative refunded amount stands for, less what earlier
 * take-backs took for a smaller cumulative amount. Take-backs form a chain per grant: each one's idempotency key
 * names the refunded amount it starts from, so a replay, an older event arriving late, or two deliveries racing on
 * several instances can never take a step twice; the one that loses a race reads the chain again. A full refund
 * takes back the whole grant. When the user has spent the credits, the ledger takes what the balance has and
 * records the rest as the entry's `shortfall`.
 */
export async function takeBackRefunded(rt: BillingRuntime, grant: Grant, refund: RefundedShare): Promise<string> {
  const total = refund.amountCents;
  const refunded = Math.min(refund.refundedCents, total);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const from = await takenUpTo(rt, grant);
    if (refunded <= from) return `already taken back ${grant.key} up to ${from} cents`;
    const wanted = shareOf(grant.micros, refunded, total) - shareOf(grant.micros, from, total);
    // a refund too small to be worth a micro-dollar: the next one's share includes it
    if (wanted <= 0) return `nothing to take back for ${grant.key} at ${refunded} cents`;
    const result = await rt.ledger.debit(grant.userId, wanted, {
      kind: "refund",
      idempotencyKey: stepKey(grant.key, from),
      meta: { grant: grant.key, chargeId: refund.chargeId, refundedCents: refunded, fromCents: from, amountCents: total },
    });
    if (!result.applied) continue;
    logShortfall(rt, grant, result.shortfall, { chargeId: refund.chargeId });
    return `took back ${result.taken} of ${grant.key} (refunded ${refunded}/${total} cents, shortfall ${result.shortfall})`;
  }
  throw new Error(`refund of ${grant.key}: the take-back chain kept moving`);
}

/**
 * A withdrawal and a reinstatement of one dispute delivered at the same time can each miss the other: the
 * reinstatement records 0 and the withdrawal takes its share all the same. Each checks again once written; whichever
 * was written second sees both and gives back what the withdrawal took, once. Returns the micro-dollars given back.
 */
async function giveBackRacedWithdrawal(rt: BillingRuntime, grant: Grant, disputeId: string): Promise<number> {
  const entries = await takeBacksOf(rt, grant, [disputeKey(grant.key, disputeId), reinstatedKey(grant.key, disputeId)]);
  const withdrawn = entries.find((e) => e.idempotencyKey === disputeKey(grant.key, disputeId));
  const reinstated = entries.find((e) => e.idempotencyKey === reinstatedKey(grant.key, disputeId));
  if (!withdrawn || !reinstated || reinstated.amount !== 0 || withdrawn.amount >= 0) return 0;
  const result = await rt.ledger.credit(grant.userId, -withdrawn.amount, {
    kind: "dispute",
    idempotencyKey: lateReinstatedKey(grant.key, disputeId),
    meta: { grant: grant.key, disputeId, reinstated: true },
  });
  return result.applied ? -withdrawn.amount : 0;
}

/**
 * A dispute's funds withdrawn: the disputed share of the grant is taken back like a full refund of that amount, once
 * per dispute (not after its reinstatement, should that event have come first).
 */
export async function takeBackDisputed(rt: BillingRuntime, grant: Grant, dispute: DisputedShare): Promise<string> {
  const key = disputeKey(grant.key, dispute.disputeId);
  if ((await takeBacksOf(rt, grant, [reinstatedKey(grant.key, dispute.disputeId)])).length > 0) return `dispute ${dispute.disputeId} already reinstated`;
  const wanted = shareOf(grant.micros, Math.min(dispute.disputedCents, dispute.amountCents), dispute.amountCents);
  if (wanted <= 0) return `nothing to take back for dispute ${dispute.disputeId}`;
  const result = await rt.ledger.debit(grant.userId, wanted, {
    kind: "dispute",
    idempotencyKey: key,
    meta: { grant: grant.key, disputeId: dispute.disputeId, disputedCents: dispute.disputedCents, amountCents: dispute.amountCents },
  });
  if (!result.applied) return `already taken back for dispute ${dispute.disputeId}`;
  if ((await giveBackRacedWithdrawal(rt, grant, dispute.disputeId)) > 0) return `dispute ${dispute.disputeId} reinstated meanwhile: gave back what was taken`;
  logShortfall(rt, grant, result.shortfall, { disputeId: dispute.disputeId });
  return `took back ${result.taken} of ${grant.key} for dispute ${dispute.disputeId} (shortfall ${result.shortfall})`;
}

/**
 * A dispute's funds reinstated (the dispute was won): what its withdrawal took is given back, once; a shortfall is not
 * (it was never taken). Arriving before the withdrawal, it is recorded (amount 0) so that the withdrawal takes nothing.
 */
export async function reinstateDisputed(rt: BillingRuntime, grant: Grant, disputeId: string): Promise<string> {
  const [withdrawn] = await takeBacksOf(rt, grant, [disputeKey(grant.key, disputeId)]);
  const result = await rt.ledger.credit(grant.userId, -(withdrawn?.amount ?? 0), {
    kind: "dispute",
    idempotencyKey: reinstatedKey(grant.key, disputeId),
    meta: { grant: grant.key, disputeId, reinstated: true },
  });
  if (!result.applied) return `dispute ${disputeId} already reinstated`;
  const late = withdrawn ? 0 : await giveBackRacedWithdrawal(rt, grant, disputeId);
  return `gave back ${-(withdrawn?.amount ?? 0) + late} of ${grant.key} for dispute ${disputeId}`;
}
