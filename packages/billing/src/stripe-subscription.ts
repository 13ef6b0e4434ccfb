import type Stripe from "stripe";
import { findPlan } from "./catalog";
import { planIdForPrice } from "./plan-prices";
import type { BillingRuntime } from "./runtime";

/** The last second a Date can hold (8.64e15 ms): past it, the ISO 8601 answer built from the time throws. */
const MAX_UNIX_SECONDS = 8_640_000_000_000;

/**
 * A time in whole Unix seconds that a Date can hold: a period or event time outside it is no time. Generous on
 * purpose: a time sent in milliseconds by mistake still orders events as it did, only what no date can show is out.
 */
export const isUnixSeconds = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_UNIX_SECONDS;

/** Reads a time field that moved between Stripe API versions (subscription → subscription item). */
function numberField(obj: object, name: string): number | undefined {
  const value: unknown = (obj as Record<string, unknown>)[name];
  return isUnixSeconds(value) ? value : undefined;
}

/** Current period of a subscription: on the subscription (older API versions) or on its first item (newer). */
export function subscriptionPeriod(sub: Stripe.Subscription): { start?: number; end?: number } {
  const item = sub.items?.data?.[0];
  return {
    start: numberField(sub, "current_period_start") ?? (item ? numberField(item, "current_period_start") : undefined),
    end: numberField(sub, "current_period_end") ?? (item ? numberField(item, "current_period_end") : undefined),
  };
}

// a signed event's ids are strings; anything else is no id (never a query operator)
const idOf = (value: string | { id: string } | null | undefined): string | undefined =>
  typeof value === "string" ? value : typeof value?.id === "string" ? value.id : undefined;

/**
 * Which configured plan a subscription is for: its price first (a plan change at the processor, in its dashboard or
 * customer portal, swaps the price and keeps the metadata written at creation), then our metadata.
 */
export async function planIdOfSubscription(rt: BillingRuntime, sub: Stripe.Subscription): Promise<string | null> {
  const priceId = idOf(sub.items?.data?.[0]?.price);
  const fromPrice = priceId ? await planIdForPrice(rt, priceId) : null;
  if (fromPrice) return fromPrice;
  const fromMetadata = sub.metadata?.plan_id;
  return fromMetadata && findPlan(rt.config, fromMetadata) ? fromMetadata : null;
}

/** The `user_id` metadata (also spelled `userId`) that names the gateway user a processor object is for. */
export function metadataUserId(metadata: Stripe.Metadata | null | undefined): string | undefined {
  const value: unknown = metadata?.user_id ?? metadata?.userId;
  // processor metadata values are strings; anything else is no user (never a query operator)
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * A user the webhook may credit: one with a billing account, or, for objects created outside the gateway (the
 * event is signed, so its metadata comes from the account owner), any active account the user directory knows.
 */
export async function isKnownUser(rt: BillingRuntime, userId: string): Promise<boolean> {
  if (await rt.stores.accounts.byUser(userId)) return true;
  return rt.billingUsers ? rt.billingUsers.isActiveUser(userId) : false;
}

/**
 * The gateway user a processor object belongs to: our `user_id` metadata when that user is known,
 * else the owner of its customer. Null for objects we never created (ignored by the webhook).
 */
export async function userIdOf(rt: BillingRuntime, metadata: Stripe.Metadata | null | undefined, customer: string | { id: string } | null | undefined): Promise<string | null> {
  const fromMetadata = metadataUserId(metadata);
  if (fromMetadata && (await isKnownUser(rt, fromMetadata))) return fromMetadata;
  const customerId = idOf(customer);
  if (!customerId) return null;
  return (await rt.stores.accounts.byCustomer(customerId))?.userId ?? null;
}

export { idOf as stripeId };
