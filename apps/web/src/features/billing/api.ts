import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@gw/api/root";
import { trpc } from "../../trpc";

type Outputs = inferRouterOutputs<AppRouter>["billing"];
export type BillingConfig = Outputs["config"];
export type Plan = BillingConfig["plans"][number];
export type SubscriptionInfo = Outputs["subscription"];
export type HistoryEntry = Outputs["history"]["entries"][number];

export function useBalance() {
  return trpc.billing.credits.useQuery(undefined, { refetchInterval: 30_000 });
}

export function useBillingConfig() {
  return trpc.billing.config.useQuery(undefined, { staleTime: 5 * 60_000 });
}

export function useSubscription() {
  return trpc.billing.subscription.useQuery();
}

export function usePaymentHistory() {
  return trpc.billing.history.useQuery({ limit: 50 });
}

export type CheckoutInput = { type: "credits"; amount: number } | { type: "subscription"; plan_id: string };

/** Creates a Stripe Checkout session and leaves the SPA for the returned URL. */
export function useCheckout() {
  const mutation = trpc.billing.createCheckoutSession.useMutation({
    onSuccess: ({ url }) => window.location.assign(url),
  });
  return {
    ...mutation,
    start(input: CheckoutInput) {
      const back = `${window.location.origin}/dashboard/billing`;
      mutation.mutate({ ...input, success_url: `${back}?checkout=success`, cancel_url: `${back}?checkout=cancelled` });
    },
  };
}

const HISTORY_LABELS: Record<HistoryEntry["type"], string> = {
  purchase: "Credit purchase",
  bonus: "Package bonus",
  plan_credits: "Plan credits",
  refund: "Refund",
  adjustment: "Adjustment",
  hold: "Request hold",
  settle: "Request charge",
  release: "Hold released",
};

export const historyLabel = (type: HistoryEntry["type"]): string => HISTORY_LABELS[type];
