import type Stripe from "stripe";
import { reinstateDisputed, takeBackDisputed, takeBackRefunded } from "../refunds";
import type { BillingRuntime } from "../runtime";
import { grantOfCharge, idField, isCents, type ChargeGrant } from "./charge-grants";
import { record, type Outcome } from "./handlers";

/** charge.refunded: the credits the charge's money granted are taken back in proportion to the refunded amount (cumulative). */
export async function onChargeRefunded(rt: BillingRuntime, charge: Stripe.Charge): Promise<Outcome> {
  const { amount, amount_refunded: refunded } = charge;
  if (!isCents(amount) || amount === 0 || !isCents(refunded)) return "ignored: charge without valid amounts";
  if (charge.paid !== true) return "ignored: refund of an unpaid charge";
  const granted = await grantOfCharge(rt, charge as unknown as Record<string, unknown>, idField(charge.payment_intent));
  if (!granted) return "ignored: refund of a payment that granted nothing";
  return takeBackRefunded(rt, granted.grant, { chargeId: charge.id, amountCents: amount, refundedCents: refunded });
}

/**
 * The grant a dispute is about and the charged amount it is a share of: the charge's when the event carries it
 * expanded, else the purchase's, else the invoice payment's.
 */
async function disputedGrant(rt: BillingRuntime, dispute: Stripe.Dispute): Promise<Required<ChargeGrant> | null> {
  const charge = record(dispute.charge) ?? {};
  const granted = await grantOfCharge(rt, charge, idField(dispute.payment_intent) ?? idField(charge.payment_intent));
  const amountCents = isCents(charge.amount) && charge.amount > 0 ? charge.amount : granted?.amountCents;
  return granted && amountCents ? { grant: granted.grant, amountCents } : null;
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
