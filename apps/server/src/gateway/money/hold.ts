import type { Ledger } from "@gw/billing/ledger/index";
import { AppError, microsToDollars, newId } from "@gw/shared";

/**
 * One request's reservation: opened with the worst case before the upstream call, closed exactly once —
 * settled to the real cost, or released when the request produced nothing.
 */
export class CreditHold {
  private closed = false;

  private constructor(
    private readonly ledger: Ledger,
    readonly userId: string,
    readonly holdId: string,
    readonly amount: number,
  ) {}

  /** Reserves `amount` micro-dollars or throws 402 insufficient_credits with both figures in dollars. */
  static async open(ledger: Ledger, userId: string, amount: number, meta: Record<string, unknown>): Promise<CreditHold> {
    const holdId = newId("hold");
    const result = await ledger.hold(userId, amount, { holdId, meta });
    if (!result.ok) {
      throw new AppError("insufficient_credits", `Insufficient credits: this request needs up to $${microsToDollars(amount)}, the balance is $${microsToDollars(result.balance)}.`, {
        current_balance: microsToDollars(result.balance),
        required_amount: microsToDollars(amount),
      });
    }
    return new CreditHold(ledger, userId, holdId, amount);
  }

  /**
   * Charges `cost`, rounded up to whole micro-dollars: the real cost, also when it is above the hold (the upstream
   * used more than the foreseeable worst case), as far as the user's credits cover it. Returns what was charged.
   * `usage` (the request's usage record) is stored with the charge: one ledger entry per request carries both.
   */
  async settle(cost: number, usage?: Record<string, unknown>): Promise<number> {
    if (this.closed) return 0;
    this.closed = true;
    return this.ledger.settle(this.userId, this.holdId, wholeMicros(cost), usage);
  }

  /**
   * Makes sure `settle(cost)` can charge the real cost above the hold, as far as the user's credits go; a caller that
   * reports `quote(cost)` before settling calls it first.
   */
  async cover(cost: number): Promise<void> {
    if (!this.closed) await this.ledger.cover(this.userId, this.holdId, wholeMicros(cost));
  }

  /** What `settle(cost)` would charge now; nothing in between may await for the two to agree. */
  quote(cost: number): number {
    return this.closed ? 0 : this.ledger.chargeable(this.userId, this.holdId, wholeMicros(cost));
  }

  /** Gives the whole hold back; harmless when already closed. */
  async release(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.ledger.release(this.userId, this.holdId);
  }
}

const wholeMicros = (cost: number): number => Math.max(0, Math.ceil(cost));
