import type Stripe from "stripe";
import { bonusMicrosFor, findPlan } from "../catalog";
import { planIdForPrice } from "../plan-prices";
import { grantPurchase } from "../purchases";
import { onSetupCheckoutCompleted, receiptOfIntent, saveCardOfPurchase } from "./card-handlers";
import type { BillingRuntime } from "../runtime";
import type { Purchase } from "../store/purchases";
import { isKnownUser, metadataUserId, planIdOfSubscription, stripeId, subscriptionPeriod, userIdOf } from "../stripe-subscription";
import { currentStates, isTerminal, toSubscriptionStatus, type SubscriptionSnapshot, type SubscriptionStatus } from "../subscription-state";

/** Stripe's largest charge amount (999,999.99 in a two-decimal currency). */
const MAX_STRIPE_CENTS = 99_999_999;

/** What a handler did, stored with the event and logged. */
export type Outcome = string;

/** The ledger key of an invoice's plan credits. */
export const invoiceGrantKey = (invoiceId: string): string => `inv:${invoiceId}`;

export async function purchaseFor(rt: BillingRuntime, metadata: Stripe.Metadata | null | undefined, paymentIntentId: string | undefined): Promise<Purchase | null> {
  const purchaseId: unknown = metadata?.purchase_id;
  if (typeof purchaseId === "string" && purchaseId !== "") {
    const purchase = await rt.stores.purchases.byId(purchaseId);
    if (purchase) return purchase;
  }
  return paymentIntentId ? rt.stores.purchases.byPaymentIntent(paymentIntentId) : null;
}

/**
 * A payment intent the gateway did not create (e.g. made in the processor's dashboard) whose metadata names a known
 * user: CONTRACT 6's "metadata carries the user id" is enough to grant what was paid, in USD, plus the package bonus.
 * The purchase id derives from the intent, so every event and every duplicate announcing it meets one purchase.
 */
async function externalPurchase(rt: BillingRuntime, intent: Stripe.PaymentIntent): Promise<Purchase | null> {
  const userId = metadataUserId(intent.metadata);
  if (!userId || !(await isKnownUser(rt, userId))) return null;
  const cents = intent.amount_received > 0 ? intent.amount_received : intent.amount;
  // above the processor's largest amount the micro-dollars would not be exact
  if (!Number.isSafeInteger(cents) || cents <= 0 || cents > MAX_STRIPE_CENTS || (intent.currency ?? "").toLowerCase() !== "usd") return null;
  const creditsMicros = cents * 10_000;
  return rt.stores.purchases.insertOnce({
    id: `pur_${intent.id}`,
    userId,
    source: "external",
    amountCents: cents,
    currency: "usd",
    creditsMicros,
    bonusMicros: bonusMicrosFor(rt.config, cents / 100),
    paymentIntentId: intent.id,
    createdAt: rt.now(),
  });
}

/** The purchase a paid payment intent pays (ours, or one made outside the gateway for a known user), linked to it. */
export async function purchaseOfIntent(rt: BillingRuntime, intent: Stripe.PaymentIntent): Promise<Purchase | null> {
  const purchase = (await purchaseFor(rt, intent.metadata, intent.id)) ?? (await externalPurchase(rt, intent));
  if (purchase) await rt.stores.purchases.link(purchase.id, { paymentIntentId: intent.id, receiptUrl: receiptOfIntent(intent) });
  return purchase;
}

/** payment_intent.succeeded: the credits and bonus of the purchase it pays, once. */
export async function onPaymentIntentSucceeded(rt: BillingRuntime, intent: Stripe.PaymentIntent): Promise<Outcome> {
  const purchase = await purchaseOfIntent(rt, intent);
  if (!purchase) return "ignored: unknown payment intent";
  const result = await grantPurchase(rt, purchase, intent.id);
  // after the grant: a processor failure here answers 500, and the redelivery grants nothing twice
  await saveCardOfPurchase(rt, intent);
  return result.applied ? `granted ${purchase.id}` : `already granted ${purchase.id}`;
}

/** checkout.session.completed: a paid credit checkout grants its purchase (same keys as its payment intent's event). */
export async function onCheckoutCompleted(rt: BillingRuntime, session: Stripe.Checkout.Session): Promise<Outcome> {
  if (session.mode === "setup") return onSetupCheckoutCompleted(rt, session);
  if (session.mode !== "payment") return "ignored: subscription checkouts are handled by subscription events";
  if (session.payment_status !== "paid") return "ignored: not paid yet";
  const paymentIntentId = stripeId(session.payment_intent);
  const purchase = await purchaseFor(rt, session.metadata, paymentIntentId);
  if (!purchase) return "ignored: unknown checkout session";
  await rt.stores.purchases.link(purchase.id, { paymentIntentId, checkoutSessionId: session.id });
  const result = await grantPurchase(rt, purchase, paymentIntentId);
  return result.applied ? `granted ${purchase.id}` : `already granted ${purchase.id}`;
}

/** customer.subscription.created / updated / deleted: a new snapshot; the newest one is the state. */
export async function onSubscriptionEvent(rt: BillingRuntime, event: Stripe.Event, sub: Stripe.Subscription): Promise<Outcome> {
  const userId = await userIdOf(rt, sub.metadata, sub.customer);
  if (!userId) return "ignored: unknown user";
  const known = await rt.stores.snapshots.bySubscription(sub.id);
  const planId = (await planIdOfSubscription(rt, sub)) ?? currentStates(known)[0]?.planId ?? null;
  if (!planId) return "ignored: unknown plan";
  const status = event.type === "customer.subscription.deleted" ? "canceled" : toSubscriptionStatus(sub.status);
  if (!status) return `ignored: unknown status ${sub.status}`;
  const period = subscriptionPeriod(sub);
  await rt.stores.snapshots.insert({
    id: `evt:${event.id}`,
    subscriptionId: sub.id,
    userId,
    planId,
    status,
    at: event.created,
    periodStart: period.start,
    periodEnd: period.end,
    // Stripe's boolean; anything else is not a cancellation (and would not be stored: a 500 redelivered for days)
    cancelAtPeriodEnd: sub.cancel_at_period_end === true,
  }, rt.now());
  rt.plans.invalidate(userId);
  return `subscription ${sub.id} ${status}`;
}

export const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;

/** The subscription an invoice bills: under `parent` in current API versions, at the top level in older ones. */
function subscriptionOfInvoice(invoice: Stripe.Invoice): { id?: string; metadata?: Stripe.Metadata | null } {
  const details = invoice.parent?.subscription_details;
  if (details) return { id: stripeId(details.subscription), metadata: details.metadata };
  const legacy = record(invoice);
  const legacySub = legacy?.subscription;
  const legacyDetails = record(legacy?.subscription_details);
  return {
    id: typeof legacySub === "string" ? legacySub : stripeId(record(legacySub) as { id: string } | undefined),
    metadata: (legacyDetails?.metadata as Stripe.Metadata | undefined) ?? null,
  };
}

/**
 * The price an invoice bills (`pricing.price_details` now, `price` in older API versions): its first charged line, so
 * that a plan change's proration invoice, which lists the old plan's unused time first, names the new plan.
 */
function priceOfInvoice(invoice: Stripe.Invoice): string | undefined {
  const data: unknown = invoice.lines?.data;
  const lines = (Array.isArray(data) ? data : []).map(record);
  const line = lines.find((l) => typeof l?.amount === "number" && l.amount > 0) ?? lines[0];
  const details = record(record(line?.pricing)?.price_details);
  const price = details?.price ?? line?.price;
  return typeof price === "string" ? price : stripeId(record(price) as { id: string } | undefined);
}

interface InvoiceContext {
  userId: string;
  subscriptionId: string;
  latest?: SubscriptionSnapshot;
  planId?: string;
}

export async function invoiceContext(rt: BillingRuntime, invoice: Stripe.Invoice): Promise<InvoiceContext | null> {
  const sub = subscriptionOfInvoice(invoice);
  if (!sub.id) return null;
  const latest = currentStates(await rt.stores.snapshots.bySubscription(sub.id))[0];
  const userId = latest?.userId ?? (await userIdOf(rt, sub.metadata, invoice.customer));
  if (!userId) return null;
  // what is billed first: after a plan change at the processor the metadata still names the plan it was created with
  const priceId = priceOfInvoice(invoice);
  const metadataPlan = sub.metadata?.plan_id;
  const planId = (priceId ? (await planIdForPrice(rt, priceId)) ?? undefined : undefined)
    ?? latest?.planId
    ?? (metadataPlan && findPlan(rt.config, metadataPlan) ? metadataPlan : undefined);
  return { userId, subscriptionId: sub.id, latest, planId };
}

/** invoice.payment_succeeded or invoice.paid: the plan's monthly credits, once per invoice. */
export async function onInvoicePaid(rt: BillingRuntime, invoice: Stripe.Invoice): Promise<Outcome> {
  const ctx = await invoiceContext(rt, invoice);
  if (!ctx) return "ignored: invoice of an unknown subscription or user";
  const plan = ctx.planId ? findPlan(rt.config, ctx.planId) : undefined;
  if (!plan) return "ignored: unknown plan";
  if (plan.monthlyCreditsMicros <= 0) return "ignored: plan has no monthly credits";
  const result = await rt.ledger.credit(ctx.userId, plan.monthlyCreditsMicros, {
    kind: "plan_credits",
    idempotencyKey: invoiceGrantKey(invoice.id),
    meta: { invoiceId: invoice.id, subscriptionId: ctx.subscriptionId, planId: plan.id },
  });
  return result.applied ? `plan credits for ${invoice.id}` : `already credited ${invoice.id}`;
}

/**
 * The state a failed invoice leaves: a subscription never paid (its first invoice, or one still `incomplete`) stays
 * `incomplete`, which carries no plan (Stripe: past_due is a renewal that failed); any other is past_due.
 */
const statusAfterFailure = (invoice: Stripe.Invoice, latest: SubscriptionSnapshot | undefined): SubscriptionStatus =>
  invoice.billing_reason === "subscription_create" || latest?.status === "incomplete" ? "incomplete" : "past_due";

/** invoice.payment_failed: the subscription is past_due (unless a newer state says otherwise) and the user is told. */
export async function onInvoiceFailed(rt: BillingRuntime, event: Stripe.Event, invoice: Stripe.Invoice): Promise<Outcome> {
  const ctx = await invoiceContext(rt, invoice);
  if (!ctx || !ctx.planId) return "ignored: invoice of an unknown subscription or user";
  // delivered after the subscription ended (Stripe cancels it once the last retry fails): no plan stays to warn about
  if (ctx.latest && isTerminal(ctx.latest.status)) return `ignored: subscription ${ctx.subscriptionId} already ${ctx.latest.status}`;
  const plan = findPlan(rt.config, ctx.planId);
  const status = statusAfterFailure(invoice, ctx.latest);
  await rt.stores.snapshots.insert({
    id: `evt:${event.id}`,
    subscriptionId: ctx.subscriptionId,
    userId: ctx.userId,
    planId: ctx.planId,
    status,
    at: event.created,
    periodStart: ctx.latest?.periodStart,
    periodEnd: ctx.latest?.periodEnd,
    // a failed payment changes the status only: a cancellation at period end still stands
    cancelAtPeriodEnd: ctx.latest?.cancelAtPeriodEnd,
  }, rt.now());
  rt.plans.invalidate(ctx.userId);
  // the payer of a first payment is at the checkout or the API call that failed, and no plan stays active to warn about
  if (status === "incomplete") return `subscription ${ctx.subscriptionId} incomplete: first payment failed`;
  const details = { planName: plan?.name ?? ctx.planId, amountDue: (invoice.amount_due ?? 0) / 100, currency: invoice.currency ?? "usd" };
  if (rt.billingNotifier) {
    try {
      await rt.billingNotifier.paymentFailed(ctx.userId, details);
    } catch (err) {
      // the state change stands; a lost e-mail must not make the processor redeliver the event
      rt.logger.warn({ err: (err as Error).message, userId: ctx.userId }, "payment failed e-mail could not be sent");
    }
  } else {
    rt.logger.info({ userId: ctx.userId, ...details }, "subscription payment failed (no mailer configured)");
  }
  return `subscription ${ctx.subscriptionId} past_due`;
}
