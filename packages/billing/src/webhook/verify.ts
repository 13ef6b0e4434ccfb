import Stripe from "stripe";
import { AppError, invalidParameter, missingParameter } from "@gw/shared";

/**
 * Verifies the `Stripe-Signature` header over the raw body (tolerance: Stripe's default 5 minutes) and parses the event.
 * Any failure is a 400 and nothing is processed.
 */
export function verifyWebhookEvent(rawBody: Buffer, signature: string | undefined, secret: string | undefined): Stripe.Event {
  if (!secret) throw new AppError("service_unavailable", "The payment webhook is not configured on this server.");
  if (!signature) throw missingParameter("Stripe-Signature");
  try {
    return Stripe.webhooks.constructEvent(rawBody, signature, secret);
  } catch {
    throw invalidParameter("Stripe-Signature", "the signature does not match the payload or has expired");
  }
}
