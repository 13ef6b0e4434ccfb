import { AppError, invalidParameter, missingParameter, newId } from "@gw/shared";
import { purchaseAmountMicros } from "./amounts";
import { subscribablePlan } from "./catalog";
import { ensureCustomer } from "./customers";
import { stripePriceFor } from "./plan-prices";
import { purchaseMetadata, startPurchase } from "./purchases";
import type { BillingRuntime } from "./runtime";
import { requireStripe, toPaymentError } from "./stripe/errors";
import { entitledSubscriptions, planChangeConflict } from "./subscriptions";
import { redirectUrl } from "./urls";

/** SPEC 2.12 */
export interface CheckoutSessionView {
  session_id: string;
  url: string;
}

export interface CreateCheckoutInput {
  type?: unknown;
  amount?: unknown;
  plan_id?: unknown;
  success_url?: unknown;
  cancel_url?: unknown;
}

/** A hosted checkout page: a one-time credit purchase, or a subscription to a paid plan. */
export async function createCheckoutSession(rt: BillingRuntime, userId: string, input: CreateCheckoutInput): Promise<CheckoutSessionView> {
  if (input.type === undefined || input.type === null) throw missingParameter("type");
  if (input.type !== "credits" && input.type !== "subscription") throw invalidParameter("type", "must be 'credits' or 'subscription'");
  return input.type === "credits" ? creditsCheckout(rt, userId, input) : subscriptionCheckout(rt, userId, input);
}

async function creditsCheckout(rt: BillingRuntime, userId: string, input: CreateCheckoutInput): Promise<CheckoutSessionView> {
  const creditsMicros = purchaseAmountMicros(input.amount);
  const successUrl = redirectUrl(input.success_url, "success_url", rt.config.checkoutAllowedOrigins);
  const cancelUrl = redirectUrl(input.cancel_url, "cancel_url", rt.config.checkoutAllowedOrigins);
  const stripe = requireStripe(rt.stripe);
  const purchase = await startPurchase(rt, userId, creditsMicros, "checkout", "usd");
  const customer = await ensureCustomer(rt, userId);
  const metadata = purchaseMetadata(purchase);
  try {
    const session = await stripe.checkout.sessions.create({
      mode: "payment",
      customer,
      client_reference_id: userId,
      line_items: [{
        quantity: 1,
        price_data: {
          currency: "usd",
          unit_amount: purchase.amountCents,
          product_data: { name: `AI Gateway credits ($${(purchase.amountCents / 100).toFixed(2)})` },
        },
      }],
      // the payment intent carries the same metadata, so payment_intent.succeeded finds the purchase too
      payment_intent_data: { metadata },
      metadata,
      success_url: successUrl,
      cancel_url: cancelUrl,
    }, { idempotencyKey: `checkout:${purchase.id}` });
    await rt.stores.purchases.link(purchase.id, { checkoutSessionId: session.id });
    return { session_id: session.id, url: session.url ?? "" };
  } catch (err) {
    throw toPaymentError(err);
  }
}

async function subscriptionCheckout(rt: BillingRuntime, userId: string, input: CreateCheckoutInput): Promise<CheckoutSessionView> {
  if (input.plan_id === undefined || input.plan_id === null || input.plan_id === "") throw missingParameter("plan_id");
  if (typeof input.plan_id !== "string") throw invalidParameter("plan_id", "must be a string");
  const plan = subscribablePlan(rt.config, input.plan_id);
  const successUrl = redirectUrl(input.success_url, "success_url", rt.config.checkoutAllowedOrigins);
  const cancelUrl = redirectUrl(input.cancel_url, "cancel_url", rt.config.checkoutAllowedOrigins);
  // The rule of create-subscription: a paid checkout would start a second subscription billed beside the first.
  const current = (await entitledSubscriptions(rt, userId))[0];
  if (current) {
    throw current.plan.id === plan.id ? new AppError("conflict", `You are already subscribed to '${plan.id}'.`) : planChangeConflict(current, plan);
  }
  const stripe = requireStripe(rt.stripe);
  const price = await stripePriceFor(rt, plan);
  const customer = await ensureCustomer(rt, userId);
  const metadata = { kind: "subscription", user_id: userId, plan_id: plan.id };
  try {
    const session = await stripe.checkout.sessions.create({
      mode: "subscription",
      customer,
      client_reference_id: userId,
      line_items: [{ price, quantity: 1 }],
      subscription_data: { metadata },
      metadata,
      success_url: successUrl,
      cancel_url: cancelUrl,
    }, { idempotencyKey: newId("checkout") });
    return { session_id: session.id, url: session.url ?? "" };
  } catch (err) {
    throw toPaymentError(err);
  }
}
