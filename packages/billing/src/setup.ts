import { newId } from "@gw/shared";
import type { CheckoutSessionView } from "./checkout";
import { ensureCustomer } from "./customers";
import type { BillingRuntime } from "./runtime";
import { requireStripe, toPaymentError } from "./stripe/errors";
import { redirectUrl } from "./urls";

export interface CreateSetupSessionInput {
  success_url?: unknown;
  cancel_url?: unknown;
}

/**
 * A hosted Checkout page in `setup` mode that saves a card for auto top-up; `checkout.session.completed` (or
 * `setup_intent.succeeded`) then makes it the customer's default payment method.
 */
export async function createSetupSession(rt: BillingRuntime, userId: string, input: CreateSetupSessionInput): Promise<CheckoutSessionView> {
  const successUrl = redirectUrl(input.success_url, "success_url", rt.config.checkoutAllowedOrigins);
  const cancelUrl = redirectUrl(input.cancel_url, "cancel_url", rt.config.checkoutAllowedOrigins);
  const stripe = requireStripe(rt.stripe);
  const customer = await ensureCustomer(rt, userId);
  const metadata = { kind: "setup", user_id: userId };
  try {
    const session = await stripe.checkout.sessions.create({
      mode: "setup",
      customer,
      currency: "usd",
      client_reference_id: userId,
      setup_intent_data: { metadata },
      metadata,
      success_url: successUrl,
      cancel_url: cancelUrl,
    }, { idempotencyKey: newId("setup") });
    return { session_id: session.id, url: session.url ?? "" };
  } catch (err) {
    throw toPaymentError(err);
  }
}

/**
 * Makes a saved payment method the default of the customer it belongs to (at the processor and here), so that auto
 * top-up charges it. Returns false for a customer the gateway does not know.
 */
export async function makeDefaultPaymentMethod(rt: BillingRuntime, customerId: string, paymentMethodId: string): Promise<boolean> {
  const account = await rt.stores.accounts.byCustomer(customerId);
  if (!account) return false;
  const stripe = requireStripe(rt.stripe);
  // no idempotency key: the update is idempotent itself, and a card saved again later must become the default again
  await stripe.customers.update(customerId, { invoice_settings: { default_payment_method: paymentMethodId } });
  await rt.stores.accounts.setDefaultPaymentMethod(account.userId, paymentMethodId);
  return true;
}
