import { AppError, microsToDollars } from "@gw/shared";
import type { BillingDeps } from "./runtime";

export interface AdjustmentResult {
  /** micro-dollars */
  balanceBefore: number;
  balance: number;
  /** false when the idempotency key was used already: nothing changed */
  applied: boolean;
}

const dollars = (micros: number) => `$${microsToDollars(micros).toFixed(2)}`;

/**
 * An operator's credit adjustment (CONTRACT 12): an `adjustment` ledger entry, positive or negative, once per
 * idempotency key. The ledger refuses a debit the balance does not cover (never below zero): 409 conflict naming
 * the balance.
 */
export async function adjustCredits(
  deps: BillingDeps, userId: string, amount: number, opts: { idempotencyKey: string; meta?: Record<string, unknown> },
): Promise<AdjustmentResult> {
  if (!Number.isSafeInteger(amount) || amount === 0) throw new AppError("invalid_parameter", "Invalid 'amount': must not be 0.");
  const balanceBefore = await deps.ledger.balance(userId);
  try {
    const result = await deps.ledger.credit(userId, amount, { kind: "adjustment", idempotencyKey: opts.idempotencyKey, meta: opts.meta });
    return { balanceBefore, balance: result.balance, applied: result.applied };
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    const balance = await deps.ledger.balance(userId);
    throw new AppError("conflict", `The balance is ${dollars(balance)}: a debit of ${dollars(-amount)} would take it below zero.`);
  }
}
