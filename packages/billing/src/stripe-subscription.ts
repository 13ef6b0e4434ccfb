import type Stripe from "stripe";
import { findPlan } from "./catalog";
import { planIdForPrice } from "./plan-prices";
import type { BillingRuntime } from "./runtime";

/** Reads a numeric field that moved between Stripe API versions (subscription → subscription item). */
function numberField(obj: object, name: string): number | undefined {
  const value: unknown = (obj as Record<string, unknown>)[name];
  return typeof value === "number" ? value : undefined;
}

/** Current period of a subscription: on the subscription (older API versions) or on its first item (newer). */
export function subscriptionPeriod(sub: Stripe.Subscription): { start?: number; end?: number } {
  const item = sub.items?.data?.[0];
  return {
    start: numberField(sub, "current_period_start") ?? (item ? numberField(item, "current_period_start") : undefined),
    end: numberField(sub, "current_period_end") ?? (item ? numberField(item, "current_period_end") : undefined),
  };
}

const idOf = (value: string | { id: string } | null | undefined): string | undefined =>
  typeof value === "string" ? value : value?.id;

/** Which configured plan a subscription is for: our metadata first, then its price. */
export async function planIdOfSubscription(rt: BillingRuntime, sub: Stripe.Subscription): Promise<string | null> {
  const fromMetadata = sub.metadata?.plan_id;
  if (fromMetadata && findPlan(rt.config, fromMetadata)) return fromMetadata;
  const priceId = idOf(sub.items?.data?.[0]?.price);
  return priceId ? planIdForPrice(rt, priceId) : null;
}

/**
 * The gateway user a processor object belongs to: our `user_id` metadata when that user has a billing account,
 * else the owner of its customer. Null for objects we never created (ignored by the webhook).
 */
export async function userIdOf(rt: BillingRuntime, metadata: Stripe.Metadata | null | undefined, customer: string | { id: string } | null | undefined): Promise<string | null> {
  const fromMetadata = metadata?.user_id;
  if (fromMetadata && (await rt.stores.accounts.byUser(fromMetadata))) return fromMetadata;
  const customerId = idOf(customer);
  if (!customerId) return null;
  return (await rt.stores.accounts.byCustomer(customerId))?.userId ?? null;
}

export { idOf as stripeId };
