import Stripe from "stripe";
import { AppError } from "@gw/shared";

/** Payment methods the processor refuses: declined cards and unknown or unusable payment method ids. */
function isRefusedPaymentMethod(err: Stripe.errors.StripeError): boolean {
  if (err instanceof Stripe.errors.StripeCardError) return true;
  if (!(err instanceof Stripe.errors.StripeInvalidRequestError)) return false;
  const param = err.param ?? "";
  return param.includes("payment_method") || err.code === "payment_method_unexpected_state"
    || (err.code === "resource_missing" && /payment ?method/i.test(err.message));
}

/**
 * Maps a Stripe SDK error to the one domain error type.
 * Refused payment methods are the caller's fault (402); everything else is the processor's (502), never a 500.
 */
export function toPaymentError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof Stripe.errors.StripeError) {
    if (isRefusedPaymentMethod(err)) {
      const reason = err.message ? ` ${err.message}` : "";
      return new AppError("invalid_payment_method", `The payment method was rejected.${reason}`);
    }
    if (err instanceof Stripe.errors.StripeRateLimitError) {
      return new AppError("upstream_error", "The payment processor is busy. Please try again shortly.");
    }
  }
  return new AppError("upstream_error", "The payment processor could not complete the request. Please try again later.");
}

/** Throws a clear 503 when payments are not configured (no STRIPE_SECRET_KEY). */
export function requireStripe<T>(client: T | undefined): T {
  if (!client) throw new AppError("service_unavailable", "Payments are not configured on this server.");
  return client;
}
