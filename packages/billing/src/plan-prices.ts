import type { PlanDefinition } from "@gw/config";
import { dollarsToCents } from "@gw/shared";
import type { BillingRuntime } from "./runtime";
import { requireStripe, toPaymentError } from "./stripe/errors";

const cacheKeyFor = (plan: PlanDefinition) => `${plan.id}:${dollarsToCents(plan.price)}:${plan.currency.toLowerCase()}:${plan.interval}`;

/**
 * The Stripe price of a plan: the configured `stripePriceId`, else one created on first use and remembered in the
 * database (keyed by amount too, so an operator's price change creates a new Stripe price).
 */
export async function stripePriceFor(rt: BillingRuntime, plan: PlanDefinition): Promise<string> {
  if (plan.stripePriceId) return plan.stripePriceId;
  const cacheKey = cacheKeyFor(plan);
  const cached = await rt.stores.prices.get(cacheKey);
  if (cached) return cached;
  const stripe = requireStripe(rt.stripe);
  try {
    const price = await stripe.prices.create({
      unit_amount: dollarsToCents(plan.price),
      currency: plan.currency.toLowerCase(),
      recurring: { interval: plan.interval },
      product_data: { name: `AI Gateway ${plan.name} plan` },
      metadata: { plan_id: plan.id },
    }, { idempotencyKey: `price:${cacheKey}` });
    return await rt.stores.prices.put(cacheKey, plan.id, price.id, rt.now());
  } catch (err) {
    throw toPaymentError(err);
  }
}

/** The plan a Stripe price belongs to (configured ids first, then prices created on demand). */
export async function planIdForPrice(rt: BillingRuntime, priceId: string): Promise<string | null> {
  const configured = rt.config.plans.find((p) => p.stripePriceId === priceId);
  if (configured) return configured.id;
  return rt.stores.prices.planForPrice(priceId);
}
