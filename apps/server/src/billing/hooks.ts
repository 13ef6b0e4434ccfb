import { billing, createStripeClient, registerBillingNotifier, registerBillingUserDirectory } from "@gw/billing";
import type { AppContext } from "../context";
import { paymentFailedMailer } from "./payment-failed-mail";

/**
 * The report is public: the processor's own wording is not shown (Stripe's refusal of a key quotes the key, masked
 * or, from stripe-mock, whole), only what failed.
 */
function paymentIssue(err: unknown): string {
  const statusCode = (err as { statusCode?: unknown } | undefined)?.statusCode;
  if (statusCode === 401 || statusCode === 403) return `payment processor refused the API key (HTTP ${statusCode})`;
  if (typeof statusCode === "number") return `payment processor failed (HTTP ${statusCode})`;
  // the SDK's error for an answer it could not read (not JSON); a connection that failed is a StripeConnectionError
  if ((err as { type?: unknown } | undefined)?.type === "StripeAPIError") return "payment processor sent an invalid answer";
  return "payment processor unreachable";
}

/** payment_provider in GET /api/status/external: one cheap authenticated Stripe call; unknown without a key. */
function registerPaymentHealthCheck(ctx: AppContext): void {
  const stripe = createStripeClient(ctx.config);
  ctx.healthChecks.register("payment_provider", async () => {
    if (!stripe) return { status: "unknown", issue: "STRIPE_SECRET_KEY is not set" };
    try {
      await stripe.balance.retrieve({}, { timeout: 2_000, maxNetworkRetries: 0 });
      return { status: "healthy" };
    } catch (err) {
      return { status: "unhealthy", issue: paymentIssue(err) };
    }
  });
}

/** Wires billing into the other features: health probes, account deletion, payment-failed e-mails. */
export function registerBillingHooks(ctx: AppContext): void {
  registerPaymentHealthCheck(ctx);
  // SPEC 3: deleting an account cancels its subscription at the payment processor
  ctx.accountHooks.onAccountDeleted(async (userId) => {
    const cancelled = await billing.cancelSubscriptions(ctx, userId);
    if (cancelled > 0) ctx.logger.info({ userId, cancelled }, "subscriptions cancelled for a deleted account");
  });
  registerBillingNotifier(ctx, paymentFailedMailer(ctx));
  // CONTRACT 11: low-balance e-mails and auto top-up, checked in the background after charges are written
  ctx.onShutdown(billing.watchBalances(ctx));
  // webhook objects made outside the gateway name their user only by metadata: it must be a live account
  registerBillingUserDirectory(ctx, {
    async isActiveUser(userId) {
      const user = await ctx.auth.users.findById(userId);
      return user !== null && user.deletedAt === undefined;
    },
  });
}
