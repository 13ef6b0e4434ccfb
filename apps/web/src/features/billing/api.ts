import { useMutation, useQuery } from "@tanstack/react-query";
import { apiFetch } from "../../lib/http";

export interface Balance {
  balance: number;
  currency: string;
}

export interface PlanLimits {
  requests_per_minute?: number;
  concurrent_requests?: number;
}

export interface Plan {
  id: string;
  name: string;
  price: number;
  currency: string;
  interval: string;
  features?: string[];
  limits?: PlanLimits;
  included_credits?: number;
}

export interface CreditPackage {
  amount: number;
  bonus: number;
  total: number;
}

export interface BillingConfig {
  plans: Plan[];
  credit_packages: CreditPackage[];
  payment_publishable_key: string;
}

export interface Subscription {
  subscription_id: string;
  status: string;
  current_period_start: string;
  current_period_end: string;
  plan: Pick<Plan, "id" | "name" | "price" | "currency" | "interval">;
  cancel_at_period_end?: boolean;
}

export interface PaymentHistoryEntry {
  id: string;
  created_at: string;
  /** dollars; positive credits, negative charges */
  amount: number;
  kind: string;
  description: string;
}

export const balanceKey = ["billing", "credits"] as const;

export function useBalance() {
  return useQuery({ queryKey: balanceKey, queryFn: () => apiFetch<Balance>("/api/billing/credits"), refetchInterval: 30_000 });
}

export function useBillingConfig() {
  return useQuery({ queryKey: ["billing", "config"], queryFn: () => apiFetch<BillingConfig>("/api/billing/config"), staleTime: 5 * 60_000 });
}

export function useSubscription() {
  return useQuery({
    queryKey: ["billing", "subscription"],
    queryFn: () => apiFetch<{ subscription: Subscription | null; plan: Plan }>("/api/billing/subscription"),
  });
}

export function usePaymentHistory() {
  return useQuery({
    queryKey: ["billing", "history"],
    queryFn: () => apiFetch<{ entries: PaymentHistoryEntry[] }>("/api/billing/history"),
  });
}

export type CheckoutInput = { type: "credits"; amount: number } | { type: "subscription"; plan_id: string };

/** Creates a Stripe Checkout session and leaves the SPA for the returned URL. */
export function useCheckout() {
  return useMutation({
    mutationFn: (input: CheckoutInput) => {
      const back = `${window.location.origin}/dashboard/billing`;
      return apiFetch<{ session_id: string; url: string }>("/api/billing/create-checkout-session", {
        method: "POST",
        body: { ...input, success_url: `${back}?checkout=success`, cancel_url: `${back}?checkout=cancelled` },
      });
    },
    onSuccess: ({ url }) => {
      window.location.assign(url);
    },
  });
}
