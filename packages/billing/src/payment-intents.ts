import { purchaseAmountMicros, purchaseCurrency } from "./amounts";
import { ensureCustomer } from "./customers";
import { purchaseMetadata, startPurchase } from "./purchases";
import type { BillingRuntime } from "./runtime";
import { requireStripe, toPaymentError } from "./stripe/errors";

/** SPEC 2.13 */
export interface PaymentIntentView {
  client_secret: string;
  payment_intent_id: string;
  /** cents */
  amount: number;
  currency: string;
}

export interface CreatePaymentIntentInput {
  amount?: unknown;
  currency?: unknown;
}

/** A payment intent for a credit purchase; `payment_intent.succeeded` grants amount + bonus once. */
export async function createPaymentIntent(rt: BillingRuntime, userId: string, input: CreatePaymentIntentInput): Promise<PaymentIntentView> {
  const creditsMicros = purchaseAmountMicros(input.amount);
  const currency = purchaseCurrency(input.currency);
  const stripe = requireStripe(rt.stripe);
  const purchase = await startPurchase(rt, userId, creditsMicros, "payment_intent", currency);
  const customer = await ensureCustomer(rt, userId);
  try {
    const intent = await stripe.paymentIntents.create({
      amount: purchase.amountCents,
      currency,
      customer,
      automatic_payment_methods: { enabled: true },
      description: `AI Gateway credits ($${(purchase.amountCents / 100).toFixed(2)})`,
      metadata: purchaseMetadata(purchase),
    }, { idempotencyKey: `pi-create:${purchase.id}` });
    await rt.stores.purchases.link(purchase.id, { paymentIntentId: intent.id });
    return {
      client_secret: intent.client_secret ?? "",
      payment_intent_id: intent.id,
      // what we charge, whatever a test double echoes back
      amount: purchase.amountCents,
      currency,
    };
  } catch (err) {
    throw toPaymentError(err);
  }
}
