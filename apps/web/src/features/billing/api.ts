import { useInfiniteQuery } from "@tanstack/react-query";
import { getQueryKey } from "@trpc/react-query";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import { useEffect, useRef, useState } from "react";
import type { AppRouter } from "@gw/api";
import { useSubmitGuard } from "../../lib/submit-guard";
import { trpc } from "../../trpc";

type Outputs = inferRouterOutputs<AppRouter>["billing"];
export type BillingConfig = Outputs["config"];
export type Plan = BillingConfig["plans"][number];
export type SubscriptionInfo = Outputs["subscription"];
export type HistoryEntry = Outputs["history"]["entries"][number];

/** `confirming`: back from a paid checkout, the webhook's credit is due any moment, so look more often. */
export function useBalance(confirming = false) {
  return trpc.billing.credits.useQuery(undefined, { refetchInterval: confirming ? 5_000 : 30_000 });
}

/**
 * When the balance moves while the page is open (a purchase's webhook, a plan's invoice credits), the payment history
 * and the subscription changed with it: fetch them again.
 */
export function useFollowBalance(balance: number | undefined) {
  const utils = trpc.useUtils();
  const seen = useRef(balance);
  useEffect(() => {
    if (balance === undefined || seen.current === balance) return;
    if (seen.current !== undefined) {
      void utils.billing.history.invalidate();
      void utils.billing.subscription.invalidate();
    }
    seen.current = balance;
  }, [balance, utils]);
}

export function useBillingConfig() {
  return trpc.billing.config.useQuery(undefined, { staleTime: 5 * 60_000 });
}

export function useSubscription() {
  return trpc.billing.subscription.useQuery();
}

/** Cancels the subscription (at the end of the period); the plan card then shows when it ends. */
export function useCancelSubscription() {
  const utils = trpc.useUtils();
  return trpc.billing.cancelSubscription.useMutation({ onSettled: () => utils.billing.subscription.invalidate() });
}

const HISTORY_PAGE = 50;

/**
 * The payment history, newest first, a page at a time: "Show older payments" follows `next_before`. Under tRPC's key,
 * so `utils.billing.history.invalidate()` re-reads every page shown, each from its fresh predecessor (no gap).
 */
export function usePaymentHistory() {
  const utils = trpc.useUtils();
  return useInfiniteQuery({
    queryKey: getQueryKey(trpc.billing.history, undefined, "infinite"),
    queryFn: ({ pageParam }) => utils.client.billing.history.query({ limit: HISTORY_PAGE, ...(pageParam === null ? {} : { before: pageParam }) }),
    initialPageParam: null as number | null,
    getNextPageParam: (last) => last.next_before,
  });
}

/** Redeems a code; the balance and the history are read again. */
export function useRedeemCode() {
  const utils = trpc.useUtils();
  return trpc.billing.redeem.useMutation({
    onSuccess: () => Promise.all([utils.billing.credits.invalidate(), utils.billing.history.invalidate()]),
  });
}

const CHECKOUT_STARTED = "gw.checkout-started";

/** When this tab left for a checkout (ms), so the page it comes back to can tell that payment's credits from older ones. */
function rememberCheckoutStart(): void {
  try {
    sessionStorage.setItem(CHECKOUT_STARTED, String(Date.now()));
  } catch {
    // storage disabled: the balance's movement alone tells that the credits arrived
  }
}

function checkoutStartedAt(): number | null {
  try {
    const raw = sessionStorage.getItem(CHECKOUT_STARTED);
    return raw === null || !/^\d+$/.test(raw) ? null : Number(raw);
  } catch {
    return null;
  }
}

const CREDIT_TYPES: ReadonlySet<HistoryEntry["type"]> = new Set(["purchase", "plan_credits"]);

/**
 * Back from a paid checkout: true once its credits are in, i.e. the balance moved while the page was open, or the
 * history lists a purchase (or plan credits) newer than the moment the checkout began (the webhook came first).
 */
export function useCheckoutConfirmed(balance: number | undefined, entries: readonly HistoryEntry[] | undefined): boolean {
  const [first, setFirst] = useState<number | undefined>(undefined);
  const [since] = useState(checkoutStartedAt);
  useEffect(() => {
    if (first === undefined && balance !== undefined) setFirst(balance);
  }, [first, balance]);
  const moved = balance !== undefined && first !== undefined && balance !== first;
  const listed = since !== null && (entries ?? []).some((e) => CREDIT_TYPES.has(e.type) && Date.parse(e.created_at) >= since - 60_000);
  return moved || listed;
}

/** What the page chooses; the return addresses are added here. */
export type CheckoutInput = Omit<inferRouterInputs<AppRouter>["billing"]["createCheckoutSession"], "success_url" | "cancel_url">;

/** Creates a Stripe Checkout session and leaves the SPA for the returned URL. */
export function useCheckout() {
  const guard = useSubmitGuard();
  const mutation = trpc.billing.createCheckoutSession.useMutation({
    onSuccess: ({ url }) => {
      rememberCheckoutStart();
      window.location.assign(url);
    },
  });
  return {
    ...mutation,
    start(input: CheckoutInput) {
      // Only a failure frees the buttons: after a success the page is leaving for the checkout.
      if (!guard.begin()) return;
      const back = `${window.location.origin}/dashboard/billing`;
      mutation.mutate({ ...input, success_url: `${back}?checkout=success`, cancel_url: `${back}?checkout=cancelled` }, { onError: guard.end });
    },
  };
}

const HISTORY_LABELS: Record<HistoryEntry["type"], string> = {
  purchase: "Credit purchase",
  bonus: "Package bonus",
  plan_credits: "Plan credits",
  refund: "Refund (credits taken back)",
  dispute: "Payment dispute",
  adjustment: "Adjustment",
  redemption: "Redeemed code",
  hold: "Request hold",
  settle: "Request charge",
  release: "Hold released",
  gap: "Ledger repair",
};

export const historyLabel = (type: HistoryEntry["type"]): string => HISTORY_LABELS[type];

export type BillingSettings = Outputs["settings"];

export function useBillingSettings() {
  return trpc.billing.settings.useQuery();
}

export function useSaveBillingSettings() {
  const utils = trpc.useUtils();
  return trpc.billing.updateSettings.useMutation({ onSuccess: (data) => utils.billing.settings.setData(undefined, data) });
}

/** Starts a Stripe Checkout in setup mode (saves a card for auto top-up) and leaves the SPA for it. */
export function useSaveCard() {
  const guard = useSubmitGuard();
  const mutation = trpc.billing.createSetupSession.useMutation({ onSuccess: ({ url }) => window.location.assign(url) });
  return {
    ...mutation,
    start() {
      if (!guard.begin()) return;
      const back = `${window.location.origin}/dashboard/billing`;
      mutation.mutate({ success_url: `${back}?card=saved`, cancel_url: `${back}?card=cancelled` }, { onError: guard.end });
    },
  };
}
