import { describe, expect, it } from "vitest";
import { ManualClock } from "@gw/shared";
import type { ChainWriter, Movement, MovementOutcome } from "../src/ledger/chain-writer";
import { DEFAULT_RESERVATION_POLICY, ReservationBook } from "../src/ledger/reservations";

/** A ledger chain in memory with the ChainWriter's contract, whose writes can be held back (a busy database). */
class GatedChain {
  balance = 0;
  readonly entries: Movement[] = [];
  /** writes started and not answered yet */
  waiting = 0;
  /** writes started in all */
  appends = 0;
  private gate?: Promise<void>;
  private open?: () => void;

  hold(): void {
    this.gate = new Promise((resolve) => { this.open = resolve; });
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  async append(_userId: string, movement: Movement): Promise<MovementOutcome> {
    this.appends++;
    this.waiting++;
    await Promise.resolve();
    if (this.gate) await this.gate;
    this.waiting--;
    if (movement.requireCover && this.balance + movement.amount < 0) return { status: "refused", balance: this.balance };
    this.entries.push(movement);
    this.balance += movement.amount;
    return { status: "applied", balance: this.balance, amount: movement.amount };
  }
}

function setup(balance: number) {
  const chain = new GatedChain();
  chain.balance = balance;
  const book = new ReservationBook(chain as unknown as ChainWriter, new ManualClock(0), "i1", { ...DEFAULT_RESERVATION_POLICY, minChunk: 1_000, maxChunk: 1_000, idleMs: 1_000 });
  const topUps = () => chain.entries.filter((e) => e.kind === "hold").map((e) => -e.amount);
  /** a hold that must be answered without waiting for any write */
  const holdAtOnce = async (holdId: string, amount: number) => {
    let answered = false;
    const result = book.hold("u", holdId, amount).then((r) => { answered = true; return r; });
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(answered, `${holdId} waited for a write`).toBe(true);
    return result;
  };
  return { chain, book, topUps, holdAtOnce };
}

const settle = async (book: ReservationBook, ids: string[], cost: number) => {
  for (const id of ids) book.close("u", id, cost);
};

describe("reservation top-ups ahead of need", () => {
  it("tops up once less than half a chunk is left, while the rest still serves requests without waiting", async () => {
    const { chain, book, topUps, holdAtOnce } = setup(10_000);
    expect(await book.hold("u", "h0", 100)).toEqual({ ok: true }); // the first one waits: nothing is reserved yet
    expect(topUps()).toEqual([1_000]);
    for (let i = 1; i <= 4; i++) expect(await holdAtOnce(`h${i}`, 100)).toEqual({ ok: true });
    expect(chain.waiting).toBe(0); // 500 left of 1,000: not yet
    // the database is busy now: the next top-up is started, and the 400 left serve the next requests meanwhile
    chain.hold();
    expect(await holdAtOnce("h5", 100)).toEqual({ ok: true });
    expect(chain.waiting).toBe(1);
    for (let i = 6; i <= 9; i++) expect(await holdAtOnce(`h${i}`, 100)).toEqual({ ok: true });
    expect(chain.waiting).toBe(1); // one top-up at a time
    expect(topUps()).toEqual([1_000]);
    chain.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(topUps()).toEqual([1_000, 1_000]);
    expect(await holdAtOnce("h10", 100)).toEqual({ ok: true });
    await settle(book, Array.from({ length: 11 }, (_, i) => `h${i}`), 100);
    expect(chain.balance + book.unused("u")).toBe(10_000 - 1_100);
  });

  it("a forced flush (shutdown) waits for a top-up on its way, then gives everything unused back", async () => {
    const { chain, book, holdAtOnce } = setup(10_000);
    expect(await book.hold("u", "h0", 400)).toEqual({ ok: true });
    chain.hold();
    expect(await holdAtOnce("h1", 200)).toEqual({ ok: true }); // 400 left: a top-up ahead is on its way
    expect(chain.waiting).toBe(1);
    book.close("u", "h0", 400);
    book.close("u", "h1", 200);
    const flushed = book.flush(true);
    await new Promise((resolve) => setImmediate(resolve)); // the flush is under way before the top-up lands
    chain.release();
    await flushed;
    expect(book.unused("u")).toBe(0);
    expect(chain.balance).toBe(10_000 - 600);
    expect(book.isEmpty()).toBe(true);
  });

  it("takes a whole chunk ahead or nothing: the last of a balance is taken only by the request that needs it", async () => {
    const { chain, book, topUps, holdAtOnce } = setup(1_300);
    expect(await book.hold("u", "h0", 400)).toEqual({ ok: true });
    expect(await holdAtOnce("h1", 400)).toEqual({ ok: true });
    await new Promise((resolve) => setImmediate(resolve));
    // 200 left: a whole chunk was tried ahead and refused; the 300 stored stay there for other instances
    expect(topUps()).toEqual([1_000]);
    expect(chain.balance).toBe(300);
    expect(await holdAtOnce("h2", 100)).toEqual({ ok: true }); // not tried again: no write
    expect(chain.waiting).toBe(0);
    expect(topUps()).toEqual([1_000]);
    expect(await book.hold("u", "h3", 300)).toEqual({ ok: true }); // runs short: takes the rest
    expect(topUps()).toEqual([1_000, 300]);
    expect(chain.balance).toBe(0);
  });
});

describe("flushes", () => {
  it("a forced flush waits for the charges a background flush is still writing", async () => {
    const { chain, book } = setup(1_000);
    expect(await book.hold("u", "h0", 1_000)).toEqual({ ok: true }); // the whole balance: nothing left to give back
    await new Promise((resolve) => setImmediate(resolve)); // the top-up ahead it started is refused
    book.close("u", "h0", 1_000);
    chain.hold();
    const background = book.flush(false); // takes the charge and writes it, held back by the database
    await Promise.resolve();
    expect(chain.waiting).toBe(1);
    let forcedDone = false;
    const forced = book.flush(true).then(() => { forcedDone = true; });
    await new Promise((resolve) => setImmediate(resolve));
    expect(forcedDone).toBe(false);
    chain.release();
    await Promise.all([background, forced]);
    expect(chain.entries.filter((e) => e.kind === "settle").map((e) => e.cost)).toEqual([1_000]);
    expect(chain.balance).toBe(0);
    expect(book.isEmpty()).toBe(true);
  });

  it("a background flush leaves a user alone while that user's last flush is still writing", async () => {
    const { chain, book } = setup(10_000);
    expect(await book.hold("u", "h0", 400)).toEqual({ ok: true });
    book.close("u", "h0", 300);
    chain.hold();
    const first = book.flush(false);
    await Promise.resolve();
    expect(await book.hold("u", "h1", 100)).toEqual({ ok: true });
    book.close("u", "h1", 100);
    const second = book.flush(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(chain.waiting).toBe(1); // the second wrote nothing: the first still writes
    chain.release();
    await Promise.all([first, second]);
    await book.flush(true);
    expect(chain.entries.filter((e) => e.kind === "settle").map((e) => e.cost)).toEqual([300, 100]);
    expect(chain.balance).toBe(10_000 - 400);
  });
});

describe("exclusive balance reads", () => {
  it("hold back top-ups until the read is done, so the stored figure and the reservation are read at one point", async () => {
    const { chain, book } = setup(10_000);
    expect(await book.hold("u", "h0", 100)).toEqual({ ok: true });
    let answer!: (stored: number) => void;
    const read = book.exclusiveBalance("u", () => new Promise<number>((resolve) => { answer = resolve; }));
    await Promise.resolve();
    // needs a top-up (900 left): it may not start while the stored balance is being read
    const bigHold = book.hold("u", "h1", 2_000);
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(chain.waiting).toBe(0);
    answer(chain.balance);
    expect(await read).toBe(10_000 - 100);
    expect(await bigHold).toEqual({ ok: true });
  });

  it("wait for a top-up already on its way before they read", async () => {
    const { chain, book } = setup(10_000);
    chain.hold();
    const firstHold = book.hold("u", "h0", 100); // its top-up is held back by the database
    await Promise.resolve();
    let reads = 0;
    const read = book.exclusiveBalance("u", async () => {
      reads++;
      return chain.balance;
    });
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(reads).toBe(0);
    chain.release();
    expect(await firstHold).toEqual({ ok: true });
    // before or after the first hold took its 100, never with the top-up counted in one figure and not the other
    expect([10_000, 10_000 - 100]).toContain(await read);
  });
});

describe("refusals", () => {
  it("a burst of requests the balance cannot cover is refused after one top-up, not one write each in turn", async () => {
    const { chain, book } = setup(50);
    chain.hold();
    const answers = Promise.all(Array.from({ length: 40 }, (_, i) => book.hold("u", `h${i}`, 100)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(chain.waiting).toBe(1);
    chain.release();
    expect(await answers).toEqual(Array.from({ length: 40 }, () => ({ ok: false, balance: 50 })));
    expect(chain.appends).toBe(1);
    expect(chain.entries).toEqual([]);
    // a request the balance does cover still gets its top-up after a refusal
    expect(await book.hold("u", "small", 40)).toEqual({ ok: true });
    book.close("u", "small", 40);
    expect(chain.balance + book.unused("u")).toBe(10);
  });

  it("states the balance with the unused credits a flush gave back while the refused top-up was written", async () => {
    const { chain, book } = setup(150);
    expect(await book.hold("u", "h1", 100)).toEqual({ ok: true }); // less than a chunk: all 150, scarce
    book.close("u", "h1", 100);
    chain.hold();
    // the next request needs 50 more than the 50 left; its top-up is written, then the flush gives those 50 back
    const refused = book.hold("u", "h2", 100);
    await new Promise((resolve) => setImmediate(resolve));
    const flushed = book.flush();
    await new Promise((resolve) => setImmediate(resolve));
    chain.release();
    expect(await refused).toEqual({ ok: false, balance: 50 });
    await flushed;
    expect(chain.balance + book.unused("u")).toBe(50);
  });
});
