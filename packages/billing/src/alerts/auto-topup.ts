import Stripe from "stripe";
import { microsToDollars } from "@gw/shared";
import { purchaseMetadata, startPurchase } from "../purchases";
import type { BillingRuntime } from "../runtime";
import type { BillingSettings } from "../store/billing-settings";
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
  const amount = microsToDollars(settings.autoTopup.amountMicros);
  const failure = await charge(rt, settings, trigger);
  if (failure === undefined) {
    if (settings.autoTopup.failures > 0) await rt.stores.settings.resetTopupFailures(userId);
    return;
  }
  const disabled = settings.autoTopup.failures + 1 >= MAX_TOPUP_FAILURES;
  await rt.stores.settings.recordTopupFailure(userId, disabled);
  rt.logger.warn({ userId, amount, reason: failure, disabled }, "auto top-up failed");
  await rt.billingNotifier?.autoTopupFailed?.(userId, { amount, reason: failure, disabled });
}

/** One off-session payment; undefined when it went through, else why not (for the e-mail). */
async function charge(rt: BillingRuntime, settings: BillingSettings, idempotencyKey: string): Promise<string | undefined> {
  const account = await rt.stores.accounts.byUser(settings.userId);
  if (!rt.stripe) return "payments are not configured";
  if (!account?.defaultPaymentMethodId) return "no saved card";
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
    // credited by payment_intent.succeeded; one that needs the card holder (authentication) cannot go on off-session
    return intent.status === "succeeded" || intent.status === "processing" ? undefined : `the payment needs action (${intent.status})`;
  } catch (err) {
    if (err instanceof Stripe.errors.StripeCardError) return err.message || "the card was declined";
    return "the payment processor could not be reached";
  }
}
