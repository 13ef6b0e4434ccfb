import { AppError, invalidParameter, microsToDollars } from "@gw/shared";
import { purchaseAmountMicros, thresholdMicros } from "./amounts";
import type { BillingRuntime } from "./runtime";
import type { BillingSettings } from "./store/billing-settings";

/** GET/PUT /api/billing/settings (CONTRACT 11). Dollars. */
export interface BillingSettingsView {
  low_balance_threshold: number | null;
  auto_topup: { enabled: boolean; threshold: number; amount: number };
  /** a card is saved (the customer's default payment method): auto top-up can be enabled */
  has_saved_card: boolean;
}

export interface PutBillingSettingsInput {
  low_balance_threshold?: unknown;
  auto_topup?: unknown;
}

/** Auto top-up's threshold and amount before a user picks their own (dollars). */
const DEFAULT_TOPUP = { threshold: 5, amount: 20 };

function defaults(userId: string): BillingSettings {
  return {
    userId,
    lowBalanceThresholdMicros: null,
    autoTopup: { enabled: false, thresholdMicros: DEFAULT_TOPUP.threshold * 1_000_000, amountMicros: DEFAULT_TOPUP.amount * 1_000_000, failures: 0, attempts: 0 },
    version: 0,
    savedAtSeq: 0,
    balanceAtSaveMicros: 0,
    updatedAt: new Date(0),
  };
}

async function view(rt: BillingRuntime, settings: BillingSettings): Promise<BillingSettingsView> {
  const account = await rt.stores.accounts.byUser(settings.userId);
  return {
    low_balance_threshold: settings.lowBalanceThresholdMicros === null ? null : microsToDollars(settings.lowBalanceThresholdMicros),
    auto_topup: {
      enabled: settings.autoTopup.enabled,
      threshold: microsToDollars(settings.autoTopup.thresholdMicros),
      amount: microsToDollars(settings.autoTopup.amountMicros),
    },
    has_saved_card: Boolean(account?.defaultPaymentMethodId),
  };
}

export async function getSettings(rt: BillingRuntime, userId: string): Promise<BillingSettingsView> {
  return view(rt, (await rt.stores.settings.get(userId)) ?? defaults(userId));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Changes the fields given (the others stay). Saving arms the low-balance e-mail again: the next charge that takes
 * the balance from at or above the threshold to below it sends one. Enabling auto top-up needs a saved card (409).
 */
export async function putSettings(rt: BillingRuntime, userId: string, input: PutBillingSettingsInput): Promise<BillingSettingsView> {
  const current = (await rt.stores.settings.get(userId)) ?? defaults(userId);
  const next: BillingSettings = { ...current, autoTopup: { ...current.autoTopup } };
  if (input.low_balance_threshold !== undefined) {
    next.lowBalanceThresholdMicros = input.low_balance_threshold === null ? null : thresholdMicros(input.low_balance_threshold, "low_balance_threshold");
  }
  if (input.auto_topup !== undefined) {
    const topup = input.auto_topup;
    if (!isObject(topup)) throw invalidParameter("auto_topup", "must be an object {enabled, threshold, amount}");
    if (topup.threshold !== undefined) next.autoTopup.thresholdMicros = thresholdMicros(topup.threshold, "auto_topup.threshold");
    if (topup.amount !== undefined) next.autoTopup.amountMicros = purchaseAmountMicros(topup.amount, "auto_topup.amount");
    if (topup.enabled !== undefined) {
      if (typeof topup.enabled !== "boolean") throw invalidParameter("auto_topup.enabled", "must be true or false");
      // enabling (again) starts the count of failed attempts afresh
      if (topup.enabled && !current.autoTopup.enabled) next.autoTopup.failures = 0;
      next.autoTopup.enabled = topup.enabled;
    }
  }
  if (next.autoTopup.enabled && !current.autoTopup.enabled) {
    const account = await rt.stores.accounts.byUser(userId);
    if (!account?.defaultPaymentMethodId) {
      throw new AppError("conflict", "Auto top-up needs a saved card: save one with POST /api/billing/create-setup-session first.");
    }
  }
  const [head] = await rt.ledger.entries(userId, { limit: 1 });
  next.version = current.version + 1;
  next.savedAtSeq = head?.seq ?? 0;
  next.balanceAtSaveMicros = await rt.ledger.balance(userId);
  next.updatedAt = rt.now();
  await rt.stores.settings.put(next);
  return view(rt, next);
}
