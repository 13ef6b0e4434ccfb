// The billing feature's public face: what routes and other features call. Each function takes the app context.
import type { LedgerEntry, LedgerEntryKind } from "./ledger/index";
import { microsToDollars } from "@gw/shared";
import { publicPlan, type PublicPlan } from "./catalog";
import { createCheckoutSession, type CheckoutSessionView, type CreateCheckoutInput } from "./checkout";
import { createPaymentIntent, type CreatePaymentIntentInput, type PaymentIntentView } from "./payment-intents";
import { billingRuntime, type BillingDeps } from "./runtime";
import { cancelSubscription, cancelSubscriptionsOf, createSubscription, currentSubscription, type CancelSubscriptionInput, type CreateSubscriptionInput, type SubscriptionView } from "./subscriptions";
import { handleWebhook } from "./webhook/process-event";
import { watchBalances } from "./alerts/balance-watch";
import { getSettings, putSettings, type BillingSettingsView, type PutBillingSettingsInput } from "./settings";
import { createSetupSession, type CreateSetupSessionInput } from "./setup";

/** SPEC 2.8 */
export interface CreditBalanceView {
  balance: number;
  currency: "USD";
}

/** GET /api/billing/config */
export interface BillingConfigView {
  plans: PublicPlan[];
  credit_packages: Array<{ amount: number; bonus: number; total: number }>;
  payment_publishable_key: string;
}

/** GET /api/billing/subscription: the subscription (null on free), the plan that applies and its limits. */
export interface SubscriptionStatusView {
  subscription: SubscriptionView | null;
  plan: PublicPlan;
  limits: { requests_per_minute: number; concurrent_requests: number; monthly_credits: number };
}

export interface HistoryEntryView {
  id: string;
  type: LedgerEntryKind;
  /** dollars, signed */
  amount: number;
  balance_after: number;
  created_at: string;
  /** purchases: the processor's receipt, when it gave one */
  receipt_url?: string;
}

/** GET /api/billing/history */
export interface HistoryView {
  entries: HistoryEntryView[];
  /** pass as `before` to read the next page; null on the last page */
  next_before: number | null;
}

const HISTORY_KINDS: LedgerEntryKind[] = ["purchase", "bonus", "plan_credits", "refund", "dispute", "adjustment", "redemption"];

const historyEntry = (entry: LedgerEntry): HistoryEntryView => ({
  id: entry.id,
  type: entry.kind,
  amount: microsToDollars(entry.amount),
  balance_after: microsToDollars(entry.balanceAfter),
  created_at: entry.createdAt.toISOString(),
});

/** The receipt URLs of the purchases among these entries, by entry id (one read for the page). */
async function receiptsOf(deps: BillingDeps, entries: LedgerEntry[]): Promise<Map<string, string>> {
  const purchaseOf = new Map<string, string>();
  for (const entry of entries) {
    const purchaseId = entry.meta?.purchaseId;
    if (entry.kind === "purchase" && typeof purchaseId === "string") purchaseOf.set(entry.id, purchaseId);
  }
  const receipts = new Map<string, string>();
  if (purchaseOf.size === 0) return receipts;
  const purchases = await billingRuntime(deps).stores.purchases.byIds([...new Set(purchaseOf.values())]);
  const receiptById = new Map(purchases.flatMap((p) => (p.receiptUrl ? [[p.id, p.receiptUrl] as const] : [])));
  for (const [entryId, purchaseId] of purchaseOf) {
    const receipt = receiptById.get(purchaseId);
    if (receipt) receipts.set(entryId, receipt);
  }
  return receipts;
}

export const billing = {
  async credits(deps: BillingDeps, userId: string): Promise<CreditBalanceView> {
    return { balance: microsToDollars(await deps.ledger.balance(userId)), currency: "USD" };
  },

  config(deps: BillingDeps): BillingConfigView {
    return {
      plans: deps.config.plans.map(publicPlan),
      credit_packages: deps.config.creditPackages.map((p) => ({ amount: p.amount, bonus: p.bonus, total: p.total })),
      payment_publishable_key: deps.config.stripe.publishableKey,
    };
  },

  createCheckoutSession: (deps: BillingDeps, userId: string, input: CreateCheckoutInput): Promise<CheckoutSessionView> =>
    createCheckoutSession(billingRuntime(deps), userId, input),

  createPaymentIntent: (deps: BillingDeps, userId: string, input: CreatePaymentIntentInput): Promise<PaymentIntentView> =>
    createPaymentIntent(billingRuntime(deps), userId, input),

  createSubscription: (deps: BillingDeps, userId: string, input: CreateSubscriptionInput): Promise<SubscriptionView> =>
    createSubscription(billingRuntime(deps), userId, input),

  cancelSubscription: (deps: BillingDeps, userId: string, input: CancelSubscriptionInput): Promise<SubscriptionView> =>
    cancelSubscription(billingRuntime(deps), userId, input),

  async subscription(deps: BillingDeps, userId: string): Promise<SubscriptionStatusView> {
    const plan = await deps.plans.planFor(userId);
    return {
      subscription: await currentSubscription(billingRuntime(deps), userId),
      plan: publicPlan(plan),
      limits: {
        requests_per_minute: plan.requestsPerMinute,
        concurrent_requests: plan.concurrentRequests,
        monthly_credits: microsToDollars(plan.monthlyCreditsMicros),
      },
    };
  },

  async history(deps: BillingDeps, userId: string, opts: { limit: number; before?: number }): Promise<HistoryView> {
    const entries = await deps.ledger.entries(userId, { limit: opts.limit + 1, beforeSeq: opts.before, kinds: HISTORY_KINDS });
    const page = entries.slice(0, opts.limit);
    const last = page[page.length - 1];
    const receipts = await receiptsOf(deps, page);
    return {
      entries: page.map((entry) => {
        const receipt = receipts.get(entry.id);
        return receipt ? { ...historyEntry(entry), receipt_url: receipt } : historyEntry(entry);
      }),
      next_before: entries.length > opts.limit && last ? last.seq : null,
    };
  },

  settings: (deps: BillingDeps, userId: string): Promise<BillingSettingsView> => getSettings(billingRuntime(deps), userId),

  putSettings: (deps: BillingDeps, userId: string, input: PutBillingSettingsInput): Promise<BillingSettingsView> =>
    putSettings(billingRuntime(deps), userId, input),

  createSetupSession: (deps: BillingDeps, userId: string, input: CreateSetupSessionInput): Promise<CheckoutSessionView> =>
    createSetupSession(billingRuntime(deps), userId, input),

  /** low-balance e-mails and auto top-up, checked in the background after charges are written; returns the stop function */
  watchBalances: (deps: BillingDeps): (() => Promise<void>) => watchBalances(billingRuntime(deps)),

  webhook: (deps: BillingDeps, rawBody: Buffer, signature: string | undefined): Promise<{ received: true }> =>
    handleWebhook(billingRuntime(deps), rawBody, signature),

  /** account deletion hook: cancels active subscriptions at the processor */
  cancelSubscriptions: (deps: BillingDeps, userId: string): Promise<number> =>
    cancelSubscriptionsOf(billingRuntime(deps), userId),
};
