import Stripe from "stripe";
import { AppError, invalidParameter, missingParameter } from "@gw/shared";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What every handler relies on: a string id (the once-only claim), a string type and an object under data.object. */
function isEvent(value: unknown): value is Stripe.Event {
  return isObject(value) && typeof value.id === "string" && value.id !== "" && typeof value.type === "string"
    && isObject(value.data) && isObject(value.data.object);
}

/** How far a signature's timestamp may be from now, either way (Stripe's default tolerance, in the past). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const badSignature = () => invalidParameter("Stripe-Signature", `the signature does not match the payload, or was not made within ${SIGNATURE_TOLERANCE_SECONDS} s of now`);

/** The `t=` of a Stripe-Signature header (the last one, as the SDK reads it), in Unix seconds. */
function signedAt(signature: string): number {
  const stamps = signature.split(",").map((item) => item.split("=")).filter(([key]) => key === "t");
  return Number.parseInt(stamps.at(-1)?.[1] ?? "", 10);
}

/**
 * Verifies the `Stripe-Signature` header over the raw body and parses the event. The SDK refuses a timestamp more than
 * the tolerance in the past only; one more than the tolerance ahead (a signature made now to be replayed later, or by
 * a clock far off) is refused here too. Any failure is a 400 and nothing is processed; so is a signed payload that is
 * not an event (a 500 would have the processor redeliver it for days).
 */
export function verifyWebhookEvent(rawBody: Buffer, signature: string | undefined, secret: string | undefined): Stripe.Event {
  if (!secret) throw new AppError("service_unavailable", "The payment webhook is not configured on this server.");
  if (!signature) throw missingParameter("Stripe-Signature");
  let event: unknown;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature, secret, SIGNATURE_TOLERANCE_SECONDS);
  } catch (err) {
    // the signature is checked before the payload is parsed: anything else failing is a signed body that is not JSON
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) throw badSignature();
    event = undefined;
  }
  // the SDK's own clock, as for the past: the real time, not the application's (tests move theirs)
  if (signedAt(signature) > Date.now() / 1000 + SIGNATURE_TOLERANCE_SECONDS) throw badSignature();
  if (!isEvent(event)) throw invalidParameter("body", "must be a Stripe event with an id, a type and a data object");
  return event;
}
