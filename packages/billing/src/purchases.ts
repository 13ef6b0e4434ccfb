import { newId } from "@gw/shared";
import { bonusMicrosFor } from "./catalog";
import type { BillingRuntime } from "./runtime";
import type { Purchase } from "./store/purchases";

/** Metadata carried by every credit payment so a webhook can find (and double-check) the purchase. */
export function purchaseMetadata(purchase: Purchase): Record<string, string> {
  return {
    kind: "credits",
    purchase_id: purchase.id,
    user_id: purchase.userId,
    credits_micros: String(purchase.creditsMicros),
    bonus_micros: String(purchase.bonusMicros),
  };
}

/** Records the purchase before the processor is asked, so no payment is ever unknown to us. */
export async function startPurchase(rt: BillingRuntime, userId: string, creditsMicros: number, source: Purchase["source"], currency: string): Promise<Purchase> {
  const purchase: Purchase = {
    id: newId("pur"),
    userId,
    source,
    amountCents: creditsMicros / 10_000,
    currency,
    creditsMicros,
    bonusMicros: bonusMicrosFor(rt.config, creditsMicros / 1_000_000),
    createdAt: rt.now(),
  };
  await rt.stores.purchases.insert(purchase);
  return purchase;
}

export interface GrantResult {
  /** false when this purchase had already been granted (a duplicate or a second event for the same payment) */
  applied: boolean;
  balance: number;
}

const creditsKey = (purchase: Purchase): string => `purchase:${purchase.id}`;
const bonusKey = (purchase: Purchase): string => `purchase:${purchase.id}:bonus`;

/**
 * The ledger keys of the entries a purchase's grant writes: its credits, then its bonus (none for a bonus of 0), so
 * that a lookup of them stops once all are found.
 */
export const purchaseGrantKeys = (purchase: Purchase): [string, ...string[]] =>
  purchase.bonusMicros > 0 ? [creditsKey(purchase), bonusKey(purchase)] : [creditsKey(purchase)];

/**
 * Grants a paid purchase: the credits and the package bonus, as two ledger entries whose idempotency keys are
 * derived from the purchase, so every event announcing the same payment grants it once.
 */
export async function grantPurchase(rt: BillingRuntime, purchase: Purchase, paymentIntentId: string | undefined): Promise<GrantResult> {
  const meta = { purchaseId: purchase.id, paymentIntentId, amountCents: purchase.amountCents };
  const credit = await rt.ledger.credit(purchase.userId, purchase.creditsMicros, { kind: "purchase", idempotencyKey: creditsKey(purchase), meta });
  let balance = credit.balance;
  if (purchase.bonusMicros > 0) {
    const bonus = await rt.ledger.credit(purchase.userId, purchase.bonusMicros, { kind: "bonus", idempotencyKey: bonusKey(purchase), meta });
    balance = bonus.balance;
  }
  return { applied: credit.applied, balance };
}
