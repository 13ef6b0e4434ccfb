import type { Ledger, KeyLimit, KeySpend } from "@gw/billing";
import { AppError, microsToDollars, newId } from "@gw/shared";

/** The spend limit of the request's API key (CONTRACT 10), held beside the credits: see MeteredRequest.keyBudget. */
export interface KeyBudget {
  spend: KeySpend;
  limit: KeyLimit;
}

/** A hold on the key's budget, closed with the credit hold. */
interface KeyHold {
  budget: KeyBudget;
  chain: string;
}

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
    private readonly keyHold?: KeyHold,
  ) {}

  /**
   * Reserves `amount` micro-dollars: first of the key's limit when it has one (else 402 key_limit_exceeded with what
   * is left of it), then of the credits (else 402 insufficient_credits with both figures in dollars). The hold counts
   * against both, so that neither is ever exceeded.
   */
  static async open(ledger: Ledger, userId: string, amount: number, meta: Record<string, unknown>, keyBudget?: KeyBudget): Promise<CreditHold> {
    const holdId = newId("hold");
    let keyHold: KeyHold | undefined;
    if (keyBudget) {
      const held = await keyBudget.spend.hold(keyBudget.limit, holdId, amount);
      if (!held.ok) {
        throw new AppError("key_limit_exceeded", `This API key's limit is reached: this request needs up to $${microsToDollars(amount)}, $${microsToDollars(held.remaining)} of the key's limit is left.`, {
          limit_remaining: microsToDollars(held.remaining),
          required_amount: microsToDollars(amount),
        });
      }
      keyHold = { budget: keyBudget, chain: held.chain };
    }
    const giveBackKeyHold = async () => {
      if (keyHold) await keyHold.budget.spend.release(keyHold.chain, holdId, amount);
    };
    const result = await ledger.hold(userId, amount, { holdId, meta }).catch(async (err: unknown) => {
      await giveBackKeyHold();
      throw err;
    });
    if (!result.ok) {
      await giveBackKeyHold();
      throw new AppError("insufficient_credits", `Insufficient credits: this request needs up to $${microsToDollars(amount)}, the balance is $${microsToDollars(result.balance)}.`, {
        current_balance: microsToDollars(result.balance),
        required_amount: microsToDollars(amount),
      });
    }
    return new CreditHold(ledger, userId, holdId, amount, keyHold);
  }

  /**
   * Charges `cost`, rounded up to whole micro-dollars: the real cost, also when it is above the hold (the upstream
   * used more than the foreseeable worst case), as far as the user's credits cover it. Returns what was charged.
   * `usage` (the request's usage record) is stored with the charge: one ledger entry per request carries both.
   */
  async settle(cost: number, usage?: Record<string, unknown>): Promise<number> {
    if (this.closed) return 0;
    this.closed = true;
    const charged = await this.ledger.settle(this.userId, this.holdId, wholeMicros(cost), usage);
    if (this.keyHold) await this.keyHold.budget.spend.settle(this.keyHold.chain, this.holdId, this.amount, charged, this.keyHold.budget.limit.limitMicros);
    return charged;
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
    if (this.keyHold) await this.keyHold.budget.spend.release(this.keyHold.chain, this.holdId, this.amount);
  }
}

const wholeMicros = (cost: number): number => Math.max(0, Math.ceil(cost));
