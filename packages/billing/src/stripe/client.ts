import Stripe from "stripe";
import type { Config } from "@gw/config";

export type StripeClient = Stripe;

/** Builds the official Stripe client; `STRIPE_API_BASE` points it at stripe-mock or a local fake. Undefined without a secret key. */
export function createStripeClient(config: Pick<Config, "stripe" | "upstream">): StripeClient | undefined {
  const { secretKey, apiBase } = config.stripe;
  if (!secretKey) return undefined;
  const options: Stripe.StripeConfig = {
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    appInfo: { name: "ai-gateway" },
  };
  if (apiBase) {
    const url = new URL(apiBase);
    const protocol = url.protocol === "http:" ? "http" : "https";
    options.host = url.hostname;
    options.protocol = protocol;
    options.port = url.port || (protocol === "http" ? 80 : 443);
  }
  return new Stripe(secretKey, options);
}

/** Live keys (sk_live_/rk_live_) process live events only; every other key processes test events only. */
export function isLiveKey(secretKey: string | undefined): boolean {
  return /^(sk|rk)_live_/.test(secretKey ?? "");
}
