import type Stripe from "stripe";
import type { BillingRuntime } from "../runtime";
import { makeDefaultPaymentMethod } from "../setup";
import { stripeId } from "../stripe-subscription";
import { onTopupPaymentFailed } from "../alerts/auto-topup";
import { purchaseFor, type Outcome } from "./handlers";

/** A saved payment method made the customer's default, or why not. */
async function saveCard(rt: BillingRuntime, customer: string | { id: string } | null | undefined, paymentMethod: string | { id: string } | null | undefined): Promise<Outcome> {
  const customerId = stripeId(customer);
  const paymentMethodId = stripeId(paymentMethod);
  if (!customerId || !paymentMethodId) return "ignored: no customer or payment method";
  return (await makeDefaultPaymentMethod(rt, customerId, paymentMethodId)) ? `default payment method ${paymentMethodId}` : "ignored: unknown customer";
}

/** checkout.session.completed in `setup` mode: the card it saved becomes the customer's default. */
export async function onSetupCheckoutCompleted(rt: BillingRuntime, session: Stripe.Checkout.Session): Promise<Outcome> {
  const setupIntent = session.setup_intent;
  if (!setupIntent) return "ignored: setup session without a setup intent";
  const intent = typeof setupIntent === "string" ? await rt.stripe?.setupIntents.retrieve(setupIntent) : setupIntent;
  if (!intent) return "ignored: no payment processor";
  return saveCard(rt, session.customer ?? intent.customer, intent.payment_method);
}

/** setup_intent.succeeded: the card it saved becomes the customer's default. */
export const onSetupIntentSucceeded = (rt: BillingRuntime, intent: Stripe.SetupIntent): Promise<Outcome> =>
  saveCard(rt, intent.customer, intent.payment_method);

/** A purchase paid with `setup_future_usage` saved its card: the customer's default from now on. */
export async function saveCardOfPurchase(rt: BillingRuntime, intent: Stripe.PaymentIntent): Promise<void> {
  if (!intent.setup_future_usage) return;
  await saveCard(rt, intent.customer, intent.payment_method);
}

/** The receipt of the charge that paid a payment intent, when the event carries it. */
export function receiptOfIntent(intent: Stripe.PaymentIntent): string | undefined {
  const latest = intent.latest_charge;
  if (latest && typeof latest === "object" && latest.receipt_url) return latest.receipt_url;
  // older API versions list the charges on the intent
  const legacy = (intent as { charges?: { data?: Array<{ receipt_url?: unknown }> } }).charges?.data?.[0]?.receipt_url;
  return typeof legacy === "string" && legacy !== "" ? legacy : undefined;
}

/** charge.succeeded / charge.updated: the receipt URL of a purchase's charge, shown in the payment history. */
export async function onChargeReceipt(rt: BillingRuntime, charge: Stripe.Charge): Promise<Outcome> {
  const paymentIntentId = stripeId(charge.payment_intent);
  if (!paymentIntentId || !charge.receipt_url) return "ignored: no payment intent or receipt";
  const purchase = await rt.stores.purchases.byPaymentIntent(paymentIntentId);
  if (!purchase) return "ignored: unknown payment intent";
  await rt.stores.purchases.link(purchase.id, { receiptUrl: charge.receipt_url });
  return `receipt of ${purchase.id}`;
}

/** payment_intent.payment_failed: counts against auto top-up when it paid one (see onTopupPaymentFailed). */
export async function onPaymentIntentFailed(rt: BillingRuntime, intent: Stripe.PaymentIntent): Promise<Outcome> {
  const purchase = await purchaseFor(rt, intent.metadata, intent.id);
  return purchase ? onTopupPaymentFailed(rt, purchase) : "ignored: unknown payment intent";
}
