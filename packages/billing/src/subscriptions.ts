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
  /** true once cancelled at the end of the period: the plan applies until `current_period_end`, then ends */
  cancel_at_period_end: boolean;
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
    cancel_at_period_end: snapshot.cancelAtPeriodEnd === true,
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

/** 409 for a subscription to another plan while one is active: one subscription at a time, never two billed. */
export function planChangeConflict(current: { snapshot: SubscriptionSnapshot; plan: PlanDefinition }, wanted: PlanDefinition): AppError {
  if (current.snapshot.cancelAtPeriodEnd) {
    const end = subscriptionView(current.snapshot, current.plan).current_period_end.slice(0, 10);
    return new AppError("conflict", `Your '${current.plan.id}' subscription ends on ${end}; subscribe to '${wanted.id}' after that, or cancel it at once (POST /api/billing/cancel-subscription with at_period_end false).`);
  }
  return new AppError("conflict", `You already have an active '${current.plan.id}' subscription; cancel it before subscribing to '${wanted.id}' (POST /api/billing/cancel-subscription).`);
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
    throw planChangeConflict(current, plan);
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

export interface CancelSubscriptionInput {
  at_period_end?: unknown;
}

/**
 * Cancels the user's subscription: by default at the end of the paid period (the plan and its limits apply until
 * `current_period_end`, then the processor ends it and `customer.subscription.deleted` moves the user to free), or at
 * once with `at_period_end: false`. Cancelling again is answered with the same state. No subscription: 404.
 */
export async function cancelSubscription(rt: BillingRuntime, userId: string, input: CancelSubscriptionInput = {}): Promise<SubscriptionView> {
  const atPeriodEnd = input.at_period_end ?? true;
  if (typeof atPeriodEnd !== "boolean") throw invalidParameter("at_period_end", "must be a boolean");
  const [current] = await entitledSubscriptions(rt, userId);
  if (!current) throw new AppError("not_found", "You have no active subscription to cancel.");
  if (!atPeriodEnd) return subscriptionView(await cancelNow(rt, current.snapshot), current.plan);
  if (current.snapshot.cancelAtPeriodEnd) return subscriptionView(current.snapshot, current.plan);
  const stripe = requireStripe(rt.stripe);
  // Keyed by the state being replaced: a retry of this cancel is replayed, but a cancel after the subscription was
  // resumed at Stripe (customer portal) must reach Stripe again, not get the first cancel's stored answer (24 h).
  const replaces = `${current.snapshot.subscriptionId}:${current.snapshot.id}`;
  let sub: Stripe.Subscription;
  try {
    sub = await stripe.subscriptions.update(current.snapshot.subscriptionId, { cancel_at_period_end: true }, { idempotencyKey: `cancel-at-period-end:${replaces}` });
  } catch (err) {
    throw toPaymentError(err);
  }
  const period = subscriptionPeriod(sub);
  const at = Math.floor(rt.clock.now() / 1000);
  const snapshot: SubscriptionSnapshot = {
    ...current.snapshot,
    id: `api:cancel-at-period-end:${replaces}`,
    status: toSubscriptionStatus(sub.status) ?? current.snapshot.status,
    // newer than the state it replaces, even when that one is from the same second
    at: Math.max(at, current.snapshot.at + 1),
    periodStart: period.start ?? current.snapshot.periodStart,
    periodEnd: period.end ?? current.snapshot.periodEnd,
    cancelAtPeriodEnd: true,
  };
  await rt.stores.snapshots.insert(snapshot, rt.now());
  rt.plans.invalidate(userId);
  return subscriptionView(snapshot, current.plan);
}

/** Ends a subscription at the processor now (one already gone there counts as ended) and records it as cancelled. */
async function cancelNow(rt: BillingRuntime, snapshot: SubscriptionSnapshot): Promise<SubscriptionSnapshot> {
  const stripe = requireStripe(rt.stripe);
  try {
    await stripe.subscriptions.cancel(snapshot.subscriptionId, {}, { idempotencyKey: `cancel:${snapshot.subscriptionId}` });
  } catch (err) {
    const missing = typeof err === "object" && err !== null && (err as { code?: unknown }).code === "resource_missing";
    if (!missing) throw toPaymentError(err);
  }
  const cancelled: SubscriptionSnapshot = {
    ...snapshot, id: `cancel:${snapshot.subscriptionId}`, status: "canceled", at: Math.floor(rt.clock.now() / 1000),
  };
  await rt.stores.snapshots.insert(cancelled, rt.now());
  rt.plans.invalidate(snapshot.userId);
  return cancelled;
}

/** Account deletion: cancels every subscription still billing the user, at Stripe and locally. */
export async function cancelSubscriptionsOf(rt: BillingRuntime, userId: string): Promise<number> {
  const active = await entitledSubscriptions(rt, userId);
  for (const { snapshot } of active) await cancelNow(rt, snapshot);
  rt.plans.invalidate(userId);
  return active.length;
}
