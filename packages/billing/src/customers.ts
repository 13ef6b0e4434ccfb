import { toPaymentError, requireStripe } from "./stripe/errors";
import type { BillingRuntime } from "./runtime";

/**
 * The user's Stripe customer, created once. The Stripe idempotency key makes concurrent first calls return the same
 * customer, and the insert keyed by user id decides which id is stored if they ever differ.
 */
export async function ensureCustomer(rt: BillingRuntime, userId: string): Promise<string> {
  const existing = await rt.stores.accounts.byUser(userId);
  if (existing) return existing.stripeCustomerId;
  const stripe = requireStripe(rt.stripe);
  let customerId: string;
  try {
    const customer = await stripe.customers.create({ metadata: { user_id: userId } }, { idempotencyKey: `customer:${userId}` });
    customerId = customer.id;
  } catch (err) {
    throw toPaymentError(err);
  }
  const stored = await rt.stores.accounts.insert({ userId, stripeCustomerId: customerId, createdAt: rt.now() });
  return stored.stripeCustomerId;
}
