import type { AuthServices } from "@gw/auth";
import { createStripeClient, type BillingDeps } from "@gw/billing";
import type { AppContext } from "../context";
import type { ServiceBase } from "../services";
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

/** What billing is built with from the accounts feature: payment-failed and balance e-mails, who the users are. */
export function accountsForBilling(base: ServiceBase, users: AuthServices["users"]): Pick<BillingDeps, "billingNotifier" | "billingUsers"> {
  return {
    billingNotifier: paymentFailedMailer({ ...base, users }),
    // webhook objects made outside the gateway name their user only by metadata: it must be a live account
    billingUsers: {
      async isActiveUser(userId) {
        const user = await users.findById(userId);
        return user !== null && user.deletedAt === undefined;
      },
    },
  };
}

/** Wires billing into the other features at mount: health probes, account deletion, background balance checks. */
export function registerBillingHooks(ctx: AppContext): void {
  registerPaymentHealthCheck(ctx);
  // SPEC 3: deleting an account cancels its subscription at the payment processor
  ctx.accountHooks.onAccountDeleted(async (userId) => {
    const cancelled = await ctx.billing.cancelSubscriptions(userId);
    if (cancelled > 0) ctx.logger.info({ userId, cancelled }, "subscriptions cancelled for a deleted account");
  });
  // CONTRACT 11: low-balance e-mails and auto top-up, checked in the background after charges are written
  ctx.onShutdown(ctx.billing.watchBalances());
}
