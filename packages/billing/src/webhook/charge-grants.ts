import Stripe from "stripe";
import { grantPurchase, purchaseGrantKeys } from "../purchases";
import { grantOf, grantOfAnyUser, type Grant } from "../refunds";
import type { BillingRuntime } from "../runtime";
import { userIdOf } from "../stripe-subscription";
import { invoiceContext, invoiceGrantKey, onInvoicePaid, purchaseFor, purchaseOfIntent, record } from "./handlers";

/** A processor object reference (an id, or the expanded object) as its id; anything else as absent. */
export function idField(value: unknown): string | undefined {
  const id = typeof value === "string" ? value : record(value)?.id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

export const isCents = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** What a charge's money granted, and the amount charged for that money object when known here (cents). */
export interface ChargeGrant {
  grant: Grant;
  amountCents?: number;
}

/** Asks the processor for an object by id: null when it does not know it, or payments are not configured. */
async function retrieved<T>(rt: BillingRuntime, id: string | undefined, get: (stripe: Stripe, id: string) => Promise<T>): Promise<T | null> {
  if (!rt.stripe || !id) return null;
  try {
    return await get(rt.stripe, id);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeInvalidRequestError && err.code === "resource_missing") return null;
    throw err;
  }
}

/**
 * The invoice a payment intent paid, asked of the processor: since API version 2025-03-31 (the one the gateway's
 * client speaks) neither a charge nor a payment intent names its invoice, an invoice payment links them.
 */
async function invoicePaidBy(rt: BillingRuntime, paymentIntentId: string | undefined): Promise<{ invoiceId: string; amountCents: number } | null> {
  if (!rt.stripe || !paymentIntentId) return null;
  const { data } = await rt.stripe.invoicePayments.list({ payment: { type: "payment_intent", payment_intent: paymentIntentId }, limit: 1 });
  const payment = data.find((p) => idField(record(p.payment)?.payment_intent) === paymentIntentId);
  const invoiceId = idField(payment?.invoice);
  return payment && invoiceId ? { invoiceId, amountCents: isCents(payment.amount_paid) ? payment.amount_paid : 0 } : null;
}

/**
 * An invoice's plan credits, looked up in the chain of the user they went to: the owner of the charge's customer, else
 * the one the processor's invoice names (as when it was paid). Not granted yet (its paid event has not arrived), they
 * are granted from the processor's invoice first. Only an invoice whose user neither says is looked up by a query.
 */
async function grantOfInvoice(rt: BillingRuntime, invoiceId: string, customer: unknown): Promise<Grant | null> {
  const keys: [string] = [invoiceGrantKey(invoiceId)];
  const payer = await userIdOf(rt, undefined, idField(customer));
  const granted = payer ? await grantOf(rt, payer, keys) : null;
  if (granted) return granted;
  const invoice = await retrieved(rt, invoiceId, (stripe, id) => stripe.invoices.retrieve(id));
  const userId = invoice ? (await invoiceContext(rt, invoice))?.userId : undefined;
  if (!invoice || !userId) return grantOfAnyUser(rt, keys);
  const owned = userId === payer ? null : await grantOf(rt, userId, keys);
  if (owned || invoice.status !== "paid") return owned;
  await onInvoicePaid(rt, invoice);
  return grantOf(rt, userId, keys);
}

/**
 * What the money a refunded or disputed charge took had granted: an invoice's plan credits (the charge names the
 * invoice in API versions that have the field, else the processor's invoice payment of its payment intent does),
 * else the purchase of its payment intent (found by metadata, by the intent we linked, else by the processor's
 * intent). Such a charge proves the payment, so a money object whose payment event has not arrived yet is granted
 * first, under the grant's own idempotency keys: the take-back never precedes its grant, and the later payment event
 * grants nothing again, whatever the delivery order.
 */
export async function grantOfCharge(rt: BillingRuntime, charge: Record<string, unknown>, paymentIntentId: string | undefined): Promise<ChargeGrant | null> {
  const invoiceId = idField(charge.invoice);
  if (invoiceId) {
    const grant = await grantOfInvoice(rt, invoiceId, charge.customer);
    return grant ? { grant } : null;
  }
  let purchase = await purchaseFor(rt, record(charge.metadata) as Stripe.Metadata | undefined, paymentIntentId);
  if (!purchase) {
    const invoice = await invoicePaidBy(rt, paymentIntentId);
    if (invoice) {
      const grant = await grantOfInvoice(rt, invoice.invoiceId, charge.customer);
      return grant ? { grant, amountCents: invoice.amountCents } : null;
    }
    const intent = await retrieved(rt, paymentIntentId, (stripe, id) => stripe.paymentIntents.retrieve(id));
    purchase = intent ? await purchaseOfIntent(rt, intent) : null;
    if (!purchase) return null;
  }
  await grantPurchase(rt, purchase, paymentIntentId);
  const grant = await grantOf(rt, purchase.userId, purchaseGrantKeys(purchase));
  return grant ? { grant, amountCents: purchase.amountCents } : null;
}
