import { describe, expect, it } from "vitest";
import { ManualClock } from "@gw/shared";
import type { ChainWriter, Movement, MovementOutcome } from "../src/ledger/chain-writer";
import { DEFAULT_RESERVATION_POLICY, ReservationBook } from "../src/ledger/reservations";

/**
 * A ledger chain in memory with the ChainWriter's contract (one entry per idempotency key, covered movements refused
 * below zero), which can be told that the next write of a kind lands and yet fails, as a timeout after the database
 * applied it does.
 */
class FlakyChain {
  balance = 0;
  readonly entries: Movement[] = [];
  private readonly keys = new Set<string>();
  landThenFail?: Movement["kind"];

  async append(_userId: string, movement: Movement): Promise<MovementOutcome> {
    await Promise.resolve();
    if (this.keys.has(movement.idempotencyKey)) return { status: "duplicate", balance: this.balance };
    if (movement.requireCover && this.balance + movement.amount < 0) return { status: "refused", balance: this.balance };
    this.keys.add(movement.idempotencyKey);
    this.entries.push(movement);
    this.balance += movement.amount;
    if (this.landThenFail === movement.kind) {
      this.landThenFail = undefined;
      throw new Error("operation timed out");
    }
    return { status: "applied", balance: this.balance, amount: movement.amount };
  }
}

function setup(balance: number) {
  const chain = new FlakyChain();
  chain.balance = balance;
  const clock = new ManualClock(0);
  const book = new ReservationBook(chain as unknown as ChainWriter, clock, "i1", { ...DEFAULT_RESERVATION_POLICY, minChunk: 1_000, maxChunk: 1_000, idleMs: 1_000 });
  /** what the user has: the stored balance plus what the reservation still holds for them */
  const total = () => chain.balance + book.unused("u");
  return { chain, clock, book, total };
}

describe("reservation writes of unknown outcome", () => {
  it("a release that landed but failed is not given back a second time, nor spent from the reservation", async () => {
    const { chain, clock, book, total } = setup(10_000);
    expect(await book.hold("u", "h1", 100)).toEqual({ ok: true });
    book.close("u", "h1", 100);
    clock.advance(2_000);
    chain.landThenFail = "release";
    await book.flush();
    // the release landed (900 back in the stored balance) but the book does not know it: not spendable here
    expect(chain.balance).toBe(9_900);
    expect(book.unused("u")).toBe(0);
    expect(await book.hold("u", "h2", 10)).toEqual({ ok: true });
    book.close("u", "h2", 10);
    clock.advance(2_000);
    await book.flush();
    // retried with its own key (a duplicate): the 900 came back once, the two charges were taken once
    expect(chain.entries.filter((e) => e.kind === "release").reduce((sum, e) => sum + e.amount, 0)).toBe(
      chain.entries.filter((e) => e.kind === "hold").reduce((sum, e) => sum - e.amount, 0) - 110,
    );
    expect(total()).toBe(10_000 - 110);
    expect(book.isEmpty()).toBe(true);
  });

  it("a top-up that landed but failed is counted once it is known, then given back when idle", async () => {
    const { chain, clock, book, total } = setup(10_000);
    chain.landThenFail = "hold";
    await expect(book.hold("u", "h1", 100)).rejects.toThrow(/timed out/);
    // the top-up took 1,000 from the stored balance; until known it is nobody's to spend
    expect(chain.balance).toBe(9_000);
    clock.advance(2_000);
    await book.flush();
    expect(total()).toBe(10_000);
    expect(chain.balance).toBe(10_000);
    expect(book.isEmpty()).toBe(true);
  });
});
