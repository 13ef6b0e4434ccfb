// The billing feature's public face: what routes and other features call, built once per app instance with its
// dependencies passed in (createBilling).
import type { LedgerEntry, LedgerEntryKind } from "./ledger/index";
import { microsToDollars } from "@gw/shared";
import { publicPlan, type PublicPlan } from "./catalog";
import { createCheckoutSession, type CheckoutSessionView, type CreateCheckoutInput } from "./checkout";
import { createPaymentIntent, type CreatePaymentIntentInput, type PaymentIntentView } from "./payment-intents";
import { adjustCredits, type AdjustmentResult } from "./adjustments";
import { createRedemptions, type Redemptions } from "./redemptions/service";
import { createBillingRuntime, type BillingDeps, type BillingRuntime } from "./runtime";
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
async function receiptsOf(rt: BillingRuntime, entries: LedgerEntry[]): Promise<Map<string, string>> {
  const purchaseOf = new Map<string, string>();
  for (const entry of entries) {
    const purchaseId = entry.meta?.purchaseId;
    if (entry.kind === "purchase" && typeof purchaseId === "string") purchaseOf.set(entry.id, purchaseId);
  }
  const receipts = new Map<string, string>();
  if (purchaseOf.size === 0) return receipts;
  const purchases = await rt.stores.purchases.byIds([...new Set(purchaseOf.values())]);
  const receiptById = new Map(purchases.flatMap((p) => (p.receiptUrl ? [[p.id, p.receiptUrl] as const] : [])));
  for (const [entryId, purchaseId] of purchaseOf) {
    const receipt = receiptById.get(purchaseId);
    if (receipt) receipts.set(entryId, receipt);
  }
  return receipts;
}

function billingService(rt: BillingRuntime, redemptions: Redemptions) {
  return {
    async credits(userId: string): Promise<CreditBalanceView> {
      return { balance: microsToDollars(await rt.ledger.balance(userId)), currency: "USD" };
    },

    config(): BillingConfigView {
      return {
        plans: rt.config.plans.map(publicPlan),
        credit_packages: rt.config.creditPackages.map((p) => ({ amount: p.amount, bonus: p.bonus, total: p.total })),
        payment_publishable_key: rt.config.stripe.publishableKey,
      };
    },

    createCheckoutSession: (userId: string, input: CreateCheckoutInput): Promise<CheckoutSessionView> =>
      createCheckoutSession(rt, userId, input),

    createPaymentIntent: (userId: string, input: CreatePaymentIntentInput): Promise<PaymentIntentView> =>
      createPaymentIntent(rt, userId, input),

    createSubscription: (userId: string, input: CreateSubscriptionInput): Promise<SubscriptionView> =>
      createSubscription(rt, userId, input),

    cancelSubscription: (userId: string, input: CancelSubscriptionInput): Promise<SubscriptionView> =>
      cancelSubscription(rt, userId, input),

    async subscription(userId: string): Promise<SubscriptionStatusView> {
      const plan = await rt.plans.planFor(userId);
      return {
        subscription: await currentSubscription(rt, userId),
        plan: publicPlan(plan),
        limits: {
          requests_per_minute: plan.requestsPerMinute,
          concurrent_requests: plan.concurrentRequests,
          monthly_credits: microsToDollars(plan.monthlyCreditsMicros),
        },
      };
    },

    async history(userId: string, opts: { limit: number; before?: number }): Promise<HistoryView> {
      const entries = await rt.ledger.entries(userId, { limit: opts.limit + 1, beforeSeq: opts.before, kinds: HISTORY_KINDS });
      const page = entries.slice(0, opts.limit);
      const last = page[page.length - 1];
      const receipts = await receiptsOf(rt, page);
      return {
        entries: page.map((entry) => {
          const receipt = receipts.get(entry.id);
          return receipt ? { ...historyEntry(entry), receipt_url: receipt } : historyEntry(entry);
        }),
        next_before: entries.length > opts.limit && last ? last.seq : null,
      };
    },

    settings: (userId: string): Promise<BillingSettingsView> => getSettings(rt, userId),

    putSettings: (userId: string, input: PutBillingSettingsInput): Promise<BillingSettingsView> =>
      putSettings(rt, userId, input),

    createSetupSession: (userId: string, input: CreateSetupSessionInput): Promise<CheckoutSessionView> =>
      createSetupSession(rt, userId, input),

    /** low-balance e-mails and auto top-up, checked in the background after charges are written; returns the stop function */
    watchBalances: (): (() => Promise<void>) => watchBalances(rt),

    webhook: (rawBody: Buffer, signature: string | undefined): Promise<{ received: true }> =>
      handleWebhook(rt, rawBody, signature),

    /** account deletion hook: cancels active subscriptions at the processor */
    cancelSubscriptions: (userId: string): Promise<number> =>
      cancelSubscriptionsOf(rt, userId),

    /** an operator's credit adjustment (CONTRACT 12) */
    adjustCredits: (userId: string, amount: number, opts: { idempotencyKey: string; meta?: Record<string, unknown> }): Promise<AdjustmentResult> =>
      adjustCredits(rt, userId, amount, opts),

    redemptions,
  };
}

export type Billing = ReturnType<typeof billingService>;

/** Billing for one app instance: its Stripe client and stores, over the dependencies passed in. */
export async function createBilling(deps: BillingDeps): Promise<Billing> {
  return billingService(createBillingRuntime(deps), await createRedemptions(deps));
}
