import { createStripeClient } from "@gw/billing";
import type { AppContext } from "../context";

/** payment_provider in GET /api/status/external: one cheap authenticated Stripe call; unknown without a key. */
function registerPaymentHealthCheck(ctx: AppContext): void {
  const stripe = createStripeClient(ctx.config);
  ctx.healthChecks.register("payment_provider", async () => {
    if (!stripe) return { status: "unknown", issue: "STRIPE_SECRET_KEY is not set" };
    try {
      await stripe.balance.retrieve({}, { timeout: 2_000, maxNetworkRetries: 0 });
      return { status: "healthy" };
    } catch (err) {
      return { status: "unhealthy", issue: `payment processor unreachable: ${(err as Error).message}` };
    }
  });
}

/** Wires billing into the other features: health probes and account deletion. */
export function registerBillingHooks(ctx: AppContext): void {
  registerPaymentHealthCheck(ctx);
}
