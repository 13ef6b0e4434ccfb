import type Stripe from "stripe";
import { grantPurchase, purchaseGrantKeys } from "../purchases";
import { grantOf, reinstateDisputed, takeBackDisputed, takeBackRefunded, type Grant } from "../refunds";
import type { BillingRuntime } from "../runtime";
import { invoiceGrantKey, purchaseFor, record, type Outcome } from "./handlers";

/** A processor object reference (an id, or the expanded object) as its id; anything else as absent. */
function idField(value: unknown): string | undefined {
  const id = typeof value === "string" ? value : record(value)?.id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

const isCents = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

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
 * What the money a charge took had granted: an invoice's plan credits (the charge names the invoice in API versions
 * that have the field, else the processor's invoice payment of its payment intent does), else the purchase of its
 * payment intent. With `grantFirst`, a purchase whose payment event has not arrived yet is granted first (a
 * refunded, paid charge proves the payment), so a take-back never precedes its grant.
 */
async function grantOfCharge(rt: BillingRuntime, charge: Record<string, unknown>, paymentIntentId: string | undefined, grantFirst: boolean): Promise<Grant | null> {
  const invoiceId = idField(charge.invoice);
  if (invoiceId) return grantOf(rt, [invoiceGrantKey(invoiceId)]);
  const purchase = await purchaseFor(rt, record(charge.metadata) as Stripe.Metadata | undefined, paymentIntentId);
  if (!purchase) {
    const invoice = await invoicePaidBy(rt, paymentIntentId);
    return invoice ? grantOf(rt, [invoiceGrantKey(invoice.invoiceId)]) : null;
  }
  if (grantFirst) await grantPurchase(rt, purchase, paymentIntentId);
  return grantOf(rt, purchaseGrantKeys(purchase));
}

/** charge.refunded: the credits the charge's money granted are taken back in proportion to the refunded amount (cumulative). */
export async function onChargeRefunded(rt: BillingRuntime, charge: Stripe.Charge): Promise<Outcome> {
  const { amount, amount_refunded: refunded } = charge;
  if (!isCents(amount) || amount === 0 || !isCents(refunded)) return "ignored: charge without valid amounts";
  const grant = await grantOfCharge(rt, charge as unknown as Record<string, unknown>, idField(charge.payment_intent), charge.paid === true);
  if (!grant) return "ignored: refund of a payment that granted nothing";
  return takeBackRefunded(rt, grant, { chargeId: charge.id, amountCents: amount, refundedCents: refunded });
}

/**
 * The grant a dispute is about and the charged amount it is a share of: the charge when the event carries it
 * expanded, else the purchase of the dispute's payment intent, else the invoice it paid (its invoice payment's amount).
 */
async function disputedGrant(rt: BillingRuntime, dispute: Stripe.Dispute): Promise<{ grant: Grant; amountCents: number } | null> {
  const charge = record(dispute.charge);
  const paymentIntentId = idField(dispute.payment_intent) ?? idField(charge?.payment_intent);
  if (charge && isCents(charge.amount) && charge.amount > 0) {
    const grant = await grantOfCharge(rt, charge, paymentIntentId, false);
    return grant ? { grant, amountCents: charge.amount } : null;
  }
  const purchase = await purchaseFor(rt, undefined, paymentIntentId);
  if (!purchase) {
    const invoice = await invoicePaidBy(rt, paymentIntentId);
    const grant = invoice && invoice.amountCents > 0 ? await grantOf(rt, [invoiceGrantKey(invoice.invoiceId)]) : null;
    return grant && invoice ? { grant, amountCents: invoice.amountCents } : null;
  }
  const grant = await grantOf(rt, purchaseGrantKeys(purchase));
  return grant && purchase.amountCents > 0 ? { grant, amountCents: purchase.amountCents } : null;
}

/** charge.dispute.funds_withdrawn / funds_reinstated: the disputed share of the grant is taken back, then given back, each once. */
export async function onDisputeFunds(rt: BillingRuntime, dispute: Stripe.Dispute, reinstated: boolean): Promise<Outcome> {
  if (typeof dispute.id !== "string" || !isCents(dispute.amount)) return "ignored: dispute without valid amounts";
  const disputed = await disputedGrant(rt, dispute);
  if (!disputed) return "ignored: dispute of a payment that granted nothing";
  return reinstated
    ? reinstateDisputed(rt, disputed.grant, dispute.id)
    : takeBackDisputed(rt, disputed.grant, { disputeId: dispute.id, amountCents: disputed.amountCents, disputedCents: dispute.amount });
}
