import { microsToDollars } from "@gw/shared";
import type { LedgerEntryKind } from "../ledger/index";
import type { BillingRuntime } from "../runtime";
import type { BillingSettings } from "../store/billing-settings";
import { autoTopup } from "./auto-topup";

/** Entries that move the balance other than by requests' charges: each starts a new stretch of charges. */
const MOVEMENT_KINDS: LedgerEntryKind[] = ["purchase", "bonus", "plan_credits", "refund", "dispute", "adjustment", "redemption"];

/**
 * Where the user's balance stood when the current stretch of charges began: after the newest credit (or refund,
 * adjustment, ...) or when the settings were last saved, whichever came later. Between two such points only charges
 * move the balance, down, so a threshold is crossed at most once per stretch: the stretch names the crossing.
 */
export interface Stretch {
  /** the ledger position it starts at */
  seq: number;
  /** micro-dollars */
  startBalance: number;
  /** the newest credit's position (0: none yet): auto top-up's trigger, which only a credit moves on */
  creditSeq: number;
}

async function currentStretch(rt: BillingRuntime, settings: BillingSettings): Promise<Stretch> {
  const [movement] = await rt.ledger.entries(settings.userId, { limit: 1, kinds: MOVEMENT_KINDS });
  const creditSeq = movement?.seq ?? 0;
  if (movement && movement.seq > settings.savedAtSeq) return { seq: movement.seq, startBalance: movement.balanceAfter, creditSeq };
  return { seq: settings.savedAtSeq, startBalance: settings.balanceAtSaveMicros, creditSeq };
}

/** One e-mail per crossing: the first instance to claim the crossing's id sends it. */
async function lowBalanceAlert(rt: BillingRuntime, settings: BillingSettings, stretch: Stretch, balance: number): Promise<void> {
  const threshold = settings.lowBalanceThresholdMicros;
  if (threshold === null || balance >= threshold || stretch.startBalance < threshold) return;
  const crossing = `low:${settings.userId}:${stretch.seq}:${settings.version}`;
  if (!(await rt.stores.claims.claim(crossing, settings.userId, rt.now()))) return;
  rt.logger.info({ userId: settings.userId, balance, threshold }, "balance fell below the low-balance threshold");
  await rt.billingNotifier?.lowBalance?.(settings.userId, { balance: microsToDollars(balance), threshold: microsToDollars(threshold) });
}

/** After charges were written: the low-balance e-mail and auto top-up, when the balance is below their thresholds. */
export async function checkBalance(rt: BillingRuntime, userId: string): Promise<void> {
  const settings = await rt.stores.settings.get(userId);
  if (!settings || (settings.lowBalanceThresholdMicros === null && !settings.autoTopup.enabled)) return;
  const balance = await rt.ledger.balance(userId);
  const stretch = await currentStretch(rt, settings);
  await Promise.all([
    lowBalanceAlert(rt, settings, stretch, balance),
    settings.autoTopup.enabled && balance < settings.autoTopup.thresholdMicros ? autoTopup(rt, settings, stretch) : undefined,
  ]);
}

/** A user's balance is checked at most this often (three reads each); a crossing found late is found all the same. */
const CHECK_INTERVAL_MS = 1_000;

/**
 * Watches the ledger's flushes: each user whose charges were written is checked in the background, one check at a
 * time per user and at most one a second (charges written meanwhile ask for one more). Requests never wait for it.
 * Returns the stop function, which waits for checks under way.
 */
export function watchBalances(rt: BillingRuntime): () => Promise<void> {
  /** users being checked -> checked again when done */
  const checking = new Map<string, boolean>();
  const running = new Set<Promise<void>>();
  let stopped = false;
  const run = async (userId: string): Promise<void> => {
    do {
      checking.set(userId, false);
      const startedAt = Date.now();
      await checkBalance(rt, userId).catch((err: unknown) => rt.logger.warn({ err, userId }, "balance check failed"));
      const wait = CHECK_INTERVAL_MS - (Date.now() - startedAt);
      if (checking.get(userId) && wait > 0 && !stopped) await new Promise((resolve) => setTimeout(resolve, wait).unref());
    } while (checking.get(userId) && !stopped);
    checking.delete(userId);
  };
  const unsubscribe = rt.ledger.onChargesWritten((userId) => {
    if (stopped) return;
    if (checking.has(userId)) {
      checking.set(userId, true);
      return;
    }
    const check = run(userId).finally(() => running.delete(check));
    running.add(check);
  });
  return async () => {
    stopped = true;
    unsubscribe();
    await Promise.allSettled([...running]);
  };
}
