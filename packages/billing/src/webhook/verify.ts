import Stripe from "stripe";
import { AppError, invalidParameter, missingParameter } from "@gw/shared";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What every handler relies on: a string id (the once-only claim), a string type and an object under data.object. */
function isEvent(value: unknown): value is Stripe.Event {
  return isObject(value) && typeof value.id === "string" && value.id !== "" && typeof value.type === "string"
    && isObject(value.data) && isObject(value.data.object);
}

/**
 * Verifies the `Stripe-Signature` header over the raw body (tolerance: Stripe's default 5 minutes) and parses the event.
 * Any failure is a 400 and nothing is processed; so is a signed payload that is not an event (a 500 would have the
 * processor redeliver it for days).
 */
export function verifyWebhookEvent(rawBody: Buffer, signature: string | undefined, secret: string | undefined): Stripe.Event {
  if (!secret) throw new AppError("service_unavailable", "The payment webhook is not configured on this server.");
  if (!signature) throw missingParameter("Stripe-Signature");
  let event: unknown;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature, secret);
  } catch (err) {
    // the signature is checked before the payload is parsed: anything else failing is a signed body that is not JSON
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) {
      throw invalidParameter("Stripe-Signature", "the signature does not match the payload or has expired");
    }
    event = undefined;
  }
  if (!isEvent(event)) throw invalidParameter("body", "must be a Stripe event with an id, a type and a data object");
  return event;
}
