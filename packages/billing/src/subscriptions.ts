import type Stripe from "stripe";
import type { PlanDefinition } from "@gw/config";
import { AppError, invalidParameter, missingParameter, newId } from "@gw/shared";
import { findPlan, subscribablePlan } from "./catalog";
import { ensureCustomer } from "./customers";
import { stripePriceFor } from "./plan-prices";
import type { BillingRuntime } from "./runtime";
import { requireStripe, toPaymentError } from "./stripe/errors";
import { subscriptionPeriod } from "./stripe-subscription";
import { currentStates, isEntitled, toSubscriptionStatus, type SubscriptionSnapshot } from "./subscription-state";

/** SPEC 2.11 */
export interface SubscriptionView {
  subscription_id: string;
  status: string;
  current_period_start: string;
  current_period_end: string;
  plan: { id: string; name: string; price: number; currency: string; interval: string };
}

export interface CreateSubscriptionInput {
  plan_id?: unknown;
  payment_method_id?: unknown;
}

/** A claim older than this (its instance crashed mid-request) no longer blocks subscribing; Stripe calls take seconds. */
const SUBSCRIBE_CLAIM_STALE_MS = 2 * 60_000;

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

function addMonth(seconds: number): number {
  const date = new Date(seconds * 1000);
  date.setUTCMonth(date.getUTCMonth() + 1);
  return Math.floor(date.getTime() / 1000);
}

export function subscriptionView(snapshot: SubscriptionSnapshot, plan: PlanDefinition): SubscriptionView {
  const start = snapshot.periodStart ?? snapshot.at;
  return {
    subscription_id: snapshot.subscriptionId,
    status: snapshot.status,
    current_period_start: iso(start),
    current_period_end: iso(snapshot.periodEnd ?? addMonth(start)),
    plan: { id: plan.id, name: plan.name, price: plan.price, currency: plan.currency.toLowerCase(), interval: plan.interval },
  };
}

/** The user's subscriptions whose plan applies now, most expensive plan first. */
export async function entitledSubscriptions(rt: BillingRuntime, userId: string): Promise<Array<{ snapshot: SubscriptionSnapshot; plan: PlanDefinition }>> {
  const states = currentStates(await rt.stores.snapshots.byUser(userId));
  const out: Array<{ snapshot: SubscriptionSnapshot; plan: PlanDefinition }> = [];
  for (const snapshot of states) {
    const plan = findPlan(rt.config, snapshot.planId);
    if (plan && isEntitled(snapshot.status)) out.push({ snapshot, plan });
  }
  return out.sort((a, b) => b.plan.price - a.plan.price || b.snapshot.at - a.snapshot.at);
}

function parseInput(input: CreateSubscriptionInput): { planId: string; paymentMethodId: string } {
  if (input.plan_id === undefined || input.plan_id === null || input.plan_id === "") throw missingParameter("plan_id");
  if (typeof input.plan_id !== "string") throw invalidParameter("plan_id", "must be a string");
  if (input.payment_method_id === undefined || input.payment_method_id === null || input.payment_method_id === "") throw missingParameter("payment_method_id");
  if (typeof input.payment_method_id !== "string" || input.payment_method_id.length > 255) {
    throw invalidParameter("payment_method_id", "must be a payment method id string");
  }
  return { planId: input.plan_id, paymentMethodId: input.payment_method_id };
}

/** Records what Stripe answered, so the plan applies at once (webhooks then refine it, newest state winning). */
async function recordCreated(rt: BillingRuntime, userId: string, plan: PlanDefinition, sub: Stripe.Subscription): Promise<SubscriptionSnapshot> {
  const period = subscriptionPeriod(sub);
  const snapshot: SubscriptionSnapshot = {
    id: `api:${sub.id}:${sub.status}`,
    subscriptionId: sub.id,
    userId,
    planId: plan.id,
    status: toSubscriptionStatus(sub.status) ?? "incomplete",
    at: sub.created || Math.floor(rt.clock.now() / 1000),
    periodStart: period.start,
    periodEnd: period.end,
    cancelAtPeriodEnd: sub.cancel_at_period_end,
  };
  await rt.stores.snapshots.insert(snapshot, rt.now());
  rt.plans.invalidate(userId);
  return snapshot;
}

/**
 * Subscribes the user: attach the payment method to their customer, make it the default, create the subscription.
 * The first invoice is paid at once (error_if_incomplete), so a refused card is a 402 and nothing is left behind;
 * whatever status the processor answers is recorded as is (only trialing/active/past_due grant the plan).
 */
export async function createSubscription(rt: BillingRuntime, userId: string, input: CreateSubscriptionInput): Promise<SubscriptionView> {
  const { planId, paymentMethodId } = parseInput(input);
  const plan = subscribablePlan(rt.config, planId);
  // One at a time per user, on every instance: two requests at once (a double click) both found no subscription and
  // each created one at the processor, billed every month.
  const claimedAt = rt.now();
  if (!(await rt.stores.subscribeClaims.claim(userId, claimedAt, SUBSCRIBE_CLAIM_STALE_MS))) {
    throw new AppError("conflict", "A subscription request for this account is already in progress; check your subscription before trying again.");
  }
  try {
    return await subscribe(rt, userId, plan, paymentMethodId);
  } finally {
    await rt.stores.subscribeClaims.release(userId, claimedAt).catch(() => undefined);
  }
}

async function subscribe(rt: BillingRuntime, userId: string, plan: PlanDefinition, paymentMethodId: string): Promise<SubscriptionView> {
  const current = (await entitledSubscriptions(rt, userId))[0];
  if (current) {
    if (current.plan.id === plan.id) return subscriptionView(current.snapshot, current.plan);
    throw new AppError("conflict", `You already have an active '${current.plan.id}' subscription; cancel it before subscribing to '${plan.id}'.`);
  }
  const stripe = requireStripe(rt.stripe);
  const price = await stripePriceFor(rt, plan);
  const customer = await ensureCustomer(rt, userId);
  let sub: Stripe.Subscription;
  try {
    await stripe.paymentMethods.attach(paymentMethodId, { customer });
    await stripe.customers.update(customer, { invoice_settings: { default_payment_method: paymentMethodId } });
    sub = await stripe.subscriptions.create({
      customer,
      items: [{ price }],
      default_payment_method: paymentMethodId,
      payment_behavior: "error_if_incomplete",
      metadata: { user_id: userId, plan_id: plan.id },
    }, { idempotencyKey: newId("subreq") });
  } catch (err) {
    throw toPaymentError(err);
  }
  return subscriptionView(await recordCreated(rt, userId, plan, sub), plan);
}

/** The user's current subscription (null on the free plan). */
export async function currentSubscription(rt: BillingRuntime, userId: string): Promise<SubscriptionView | null> {
  const [best] = await entitledSubscriptions(rt, userId);
  return best ? subscriptionView(best.snapshot, best.plan) : null;
}

/** Account deletion: cancels every subscription still billing the user, at Stripe and locally. */
export async function cancelSubscriptionsOf(rt: BillingRuntime, userId: string): Promise<number> {
  const active = await entitledSubscriptions(rt, userId);
  if (active.length === 0) return 0;
  const stripe = requireStripe(rt.stripe);
  for (const { snapshot } of active) {
    try {
      await stripe.subscriptions.cancel(snapshot.subscriptionId, {}, { idempotencyKey: `cancel:${snapshot.subscriptionId}` });
    } catch (err) {
      const missing = typeof err === "object" && err !== null && (err as { code?: unknown }).code === "resource_missing";
      if (!missing) throw toPaymentError(err);
    }
    await rt.stores.snapshots.insert({
      ...snapshot, id: `cancel:${snapshot.subscriptionId}`, status: "canceled", at: Math.floor(rt.clock.now() / 1000),
    }, rt.now());
  }
  rt.plans.invalidate(userId);
  return active.length;
}
