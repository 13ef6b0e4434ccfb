import type Stripe from "stripe";
import type { BillingRuntime } from "../runtime";
import { isUnixSeconds } from "../stripe-subscription";
import { isLiveKey } from "../stripe/client";
import { onChargeReceipt, onPaymentIntentFailed, onSetupIntentSucceeded } from "./card-handlers";
import { onChargeRefunded, onDisputeFunds } from "./charge-handlers";
import { onCheckoutCompleted, onInvoiceFailed, onInvoicePaid, onPaymentIntentSucceeded, onSubscriptionEvent, type Outcome } from "./handlers";
import { verifyWebhookEvent } from "./verify";

/** A claim older than this whose delivery never finished (crashed instance) is taken over by a redelivery. */
const STALE_CLAIM_MS = 2 * 60_000;

async function dispatch(rt: BillingRuntime, event: Stripe.Event): Promise<Outcome> {
  // what the handlers key on; Stripe always sends both, so anything else is ignored rather than a 500 (and redelivery)
  const objectId: unknown = (event.data.object as { id?: unknown }).id;
  if (typeof objectId !== "string" || objectId === "") return "ignored: object without a string id";
  if (!isUnixSeconds(event.created)) return "ignored: event without a numeric created time";
  switch (event.type) {
    case "payment_intent.succeeded":
      return onPaymentIntentSucceeded(rt, event.data.object);
    case "payment_intent.payment_failed":
      return onPaymentIntentFailed(rt, event.data.object);
    case "checkout.session.completed":
      return onCheckoutCompleted(rt, event.data.object);
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted":
      return onSubscriptionEvent(rt, event, event.data.object);
    // both announce a paid invoice (an invoice marked paid out of band sends invoice.paid only); granted once per invoice
    case "invoice.paid":
    case "invoice.payment_succeeded":
      return onInvoicePaid(rt, event.data.object);
    case "invoice.payment_failed":
      return onInvoiceFailed(rt, event, event.data.object);
    case "setup_intent.succeeded":
      return onSetupIntentSucceeded(rt, event.data.object);
    case "charge.succeeded":
    case "charge.updated":
      return onChargeReceipt(rt, event.data.object);
    case "charge.refunded":
      return onChargeRefunded(rt, event.data.object);
    case "charge.dispute.funds_withdrawn":
      return onDisputeFunds(rt, event.data.object, false);
    case "charge.dispute.funds_reinstated":
      return onDisputeFunds(rt, event.data.object, true);
    default:
      return `ignored: unhandled type ${event.type}`;
  }
}

/**
 * Verifies and processes one webhook delivery, once per event id: the insert of the event id is the claim, so
 * duplicates (also concurrent ones) change nothing. A handler failure gives the claim back and rethrows, so the
 * processor's retry runs it again; handlers are idempotent, so a rerun after a crash is harmless too.
 */
export async function handleWebhook(rt: BillingRuntime, rawBody: Buffer, signature: string | undefined): Promise<{ received: true }> {
  const event = verifyWebhookEvent(rawBody, signature, rt.config.stripe.webhookSecret);
  const log = rt.logger.child({ eventId: event.id, eventType: event.type });
  if (Boolean(event.livemode) !== isLiveKey(rt.config.stripe.secretKey)) {
    log.warn({ livemode: event.livemode }, "webhook ignored: livemode does not match the secret key's mode");
    return { received: true };
  }
  const claim = await rt.stores.events.claim(event.id, event.type, rt.now());
  if (!claim.claimed) {
    const stale = !claim.completed && rt.clock.now() - claim.claimedAt.getTime() > STALE_CLAIM_MS;
    if (!stale) {
      log.info({ completed: claim.completed }, "webhook duplicate ignored");
      return { received: true };
    }
    await rt.stores.events.reclaim(event.id, rt.now());
  }
  let outcome: Outcome;
  try {
    outcome = await dispatch(rt, event);
  } catch (err) {
    await rt.stores.events.release(event.id).catch(() => undefined);
    throw err;
  }
  await rt.stores.events.complete(event.id, outcome, rt.now());
  log.info({ outcome }, "webhook processed");
  return { received: true };
}
