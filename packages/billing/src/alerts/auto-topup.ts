import Stripe from "stripe";
import { microsToDollars } from "@gw/shared";
import { purchaseMetadata, startPurchase } from "../purchases";
import type { BillingRuntime } from "../runtime";
import type { BillingSettings } from "../store/billing-settings";
import type { Purchase } from "../store/purchases";
import type { Stretch } from "./balance-watch";

/** Failed attempts in a row that turn auto top-up off. */
export const MAX_TOPUP_FAILURES = 3;

/**
 * Charges the saved card off-session for the user's auto top-up amount, once per trigger across every instance.
 * A trigger is named by the newest credit and the count of failed attempts: while a top-up is in flight (paid, its
 * credit not yet granted by the webhook) every charge meets the same trigger, already claimed; the credit, or a
 * failure, makes the next one new. The claim's id is the processor's idempotency key too.
 */
export async function autoTopup(rt: BillingRuntime, settings: BillingSettings, stretch: Stretch): Promise<void> {
  const { userId } = settings;
  const trigger = `topup:${userId}:${stretch.creditSeq}:${settings.autoTopup.attempts}`;
  if (!(await rt.stores.claims.claim(trigger, userId, rt.now()))) return;
  const outcome = await charge(rt, settings, trigger);
  if (outcome.failure === undefined) {
    if (settings.autoTopup.failures > 0) await rt.stores.settings.resetTopupFailures(userId);
    return;
  }
  await topupFailed(rt, settings, settings.autoTopup.amountMicros, outcome.failure, outcome.purchaseId);
}

/**
 * A failed attempt: counted (the next charge below the threshold then makes a new trigger), e-mailed, and the third
 * in a row turns auto top-up off. Once per purchase: a declined payment is announced both by the processor's answer
 * and by payment_intent.payment_failed.
 */
async function topupFailed(rt: BillingRuntime, settings: BillingSettings, amountMicros: number, reason: string, purchaseId?: string): Promise<boolean> {
  const { userId } = settings;
  if (purchaseId && !(await rt.stores.claims.claim(`topup-failed:${purchaseId}`, userId, rt.now()))) return false;
  const amount = microsToDollars(amountMicros);
  const disabled = settings.autoTopup.failures + 1 >= MAX_TOPUP_FAILURES;
  await rt.stores.settings.recordTopupFailure(userId, disabled);
  rt.logger.warn({ userId, amount, reason, disabled }, "auto top-up failed");
  await rt.billingNotifier?.autoTopupFailed?.(userId, { amount, reason, disabled });
  return true;
}

/** payment_intent.payment_failed of an auto top-up (one the processor accepted and that failed later, or a decline). */
export async function onTopupPaymentFailed(rt: BillingRuntime, purchase: Purchase): Promise<string> {
  if (purchase.source !== "auto_topup") return "ignored: not an auto top-up";
  const settings = await rt.stores.settings.get(purchase.userId);
  if (!settings) return "ignored: no settings";
  const counted = await topupFailed(rt, settings, purchase.creditsMicros, "the payment failed", purchase.id);
  return counted ? `auto top-up ${purchase.id} failed` : `auto top-up ${purchase.id} failure already counted`;
}

/** One off-session payment: `failure` says why it did not go through (for the e-mail), for the purchase it made. */
async function charge(rt: BillingRuntime, settings: BillingSettings, idempotencyKey: string): Promise<{ failure?: string; purchaseId?: string }> {
  const account = await rt.stores.accounts.byUser(settings.userId);
  if (!rt.stripe) return { failure: "payments are not configured" };
  if (!account?.defaultPaymentMethodId) return { failure: "no saved card" };
  const purchase = await startPurchase(rt, settings.userId, settings.autoTopup.amountMicros, "auto_topup", "usd");
  try {
    const intent = await rt.stripe.paymentIntents.create({
      amount: purchase.amountCents,
      currency: "usd",
      customer: account.stripeCustomerId,
      payment_method: account.defaultPaymentMethodId,
      off_session: true,
      confirm: true,
      description: `AI Gateway auto top-up ($${(purchase.amountCents / 100).toFixed(2)})`,
      metadata: purchaseMetadata(purchase),
    }, { idempotencyKey });
    await rt.stores.purchases.link(purchase.id, { paymentIntentId: intent.id });
    // Accepted: payment_intent.succeeded credits it (payment_intent.payment_failed counts a failure). An off-session
    // payment the card holder would have to authenticate is refused with an error, not answered with a status.
    return {};
  } catch (err) {
    const failure = err instanceof Stripe.errors.StripeCardError ? err.message || "the card was declined" : "the payment processor could not be reached";
    return { failure, purchaseId: purchase.id };
  }
}
