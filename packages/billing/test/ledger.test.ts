import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { connectDatabase, startFerretdb, type Database, type EmbeddedMongo } from "@gw/db";
import { ManualClock, randomBase62 } from "@gw/shared";
import { createLedger, type Ledger, type LedgerOptions } from "../src/ledger/index";
import { LedgerRepository } from "../src/ledger/repository";

let mongo: EmbeddedMongo;
let dir: string;
const open: Array<{ db: Database; ledger: Ledger }> = [];

/** An independent ledger instance (own connection, own caches), like a second gateway process. */
async function instance(dbName: string, clock = new ManualClock(), options: Partial<LedgerOptions> = {}): Promise<Ledger> {
  const db = await connectDatabase(mongo.uri.replace(/\/[^/]*$/, `/${dbName}`));
  const ledger = await createLedger(db, clock, { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0, ...options });
  open.push({ db, ledger });
  return ledger;
}

const freshDb = () => `ledger_${randomBase62(8)}`;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "gw-ledger-"));
  mongo = await startFerretdb({ dir });
});

afterAll(async () => {
  for (const { db, ledger } of open) {
    await ledger.close();
    await db.close();
  }
  await mongo.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("ledger", () => {
  it("credits once per idempotency key", async () => {
    const ledger = await instance(freshDb());
    expect(await ledger.balance("u1")).toBe(0);
    expect(await ledger.credit("u1", 5_000_000, { kind: "purchase", idempotencyKey: "pi:1" })).toEqual({ applied: true, balance: 5_000_000 });
    expect(await ledger.credit("u1", 5_000_000, { kind: "purchase", idempotencyKey: "pi:1" })).toEqual({ applied: false, balance: 5_000_000 });
    expect(await ledger.balance("u1")).toBe(5_000_000);
  });

  it("debits once per idempotency key, and no further than the balance: the rest is recorded as shortfall", async () => {
    const ledger = await instance(freshDb());
    await ledger.credit("u", 5_000_000, { kind: "purchase", idempotencyKey: "c" });
    expect(await ledger.debit("u", 2_000_000, { kind: "refund", idempotencyKey: "r1" })).toEqual({ applied: true, balance: 3_000_000, taken: 2_000_000, shortfall: 0 });
    expect(await ledger.debit("u", 2_000_000, { kind: "refund", idempotencyKey: "r1" })).toEqual({ applied: false, balance: 3_000_000, taken: 0, shortfall: 0 });
    expect(await ledger.debit("u", 4_000_000, { kind: "refund", idempotencyKey: "r2", meta: { why: "test" } })).toEqual({ applied: true, balance: 0, taken: 3_000_000, shortfall: 1_000_000 });
    expect(await ledger.debit("u", 1, { kind: "refund", idempotencyKey: "r3" })).toEqual({ applied: true, balance: 0, taken: 0, shortfall: 1 });
    const entries = (await ledger.entries("u")).map((e) => [e.idempotencyKey, e.amount, e.meta ?? null]);
    expect(entries).toEqual([["r3", 0, { shortfall: 1 }], ["r2", -3_000_000, { why: "test", shortfall: 1_000_000 }], ["r1", -2_000_000, null], ["c", 5_000_000, null]]);
    expect((await ledger.entriesByKeys(["r1", "r2", "nope"])).map((e) => e.idempotencyKey).sort()).toEqual(["r1", "r2"]);
    expect((await ledger.verify("u")).ok).toBe(true);
  });

  it("a debit takes the credits this instance has reserved and not used too", async () => {
    const ledger = await instance(freshDb());
    await ledger.credit("u", 10_000_000, { kind: "purchase", idempotencyKey: "c" });
    expect((await ledger.hold("u", 3_000_000, { holdId: "h1" })).ok).toBe(true);
    await ledger.settle("u", "h1", 3_000_000);
    // the reservation took a whole chunk (5 USD): 2 USD of it unused, 7 USD in all left
    expect(await ledger.debit("u", 10_000_000, { kind: "refund", idempotencyKey: "r" })).toEqual({ applied: true, balance: 0, taken: 7_000_000, shortfall: 3_000_000 });
    await ledger.flush();
    expect(await ledger.balance("u")).toBe(0);
    expect((await ledger.verify("u")).ok).toBe(true);
  });

  it("a refund that finds credits held by running requests takes what their holds give back once they close", async () => {
    const ledger = await instance(freshDb());
    const keys = async () => (await ledger.entries("u")).filter((e) => e.kind === "refund").map((e) => [e.idempotencyKey, e.amount]);
    await ledger.credit("u", 10_000_000, { kind: "purchase", idempotencyKey: "c" });
    expect((await ledger.hold("u", 5_000_000, { holdId: "h1" })).ok).toBe(true);
    expect((await ledger.hold("u", 3_000_000, { holdId: "h2" })).ok).toBe(true);
    // a full refund while 8 USD are held: 2 USD taken now, 8 short
    expect(await ledger.debit("u", 10_000_000, { kind: "refund", idempotencyKey: "r" })).toEqual({ applied: true, balance: 0, taken: 2_000_000, shortfall: 8_000_000 });
    // one request fails (its 5 USD come back), the other charges 1 of its 3 USD
    await ledger.release("u", "h1");
    expect(await keys()).toEqual([["r", -2_000_000]]);
    await ledger.settle("u", "h2", 1_000_000);
    // taken back in the background once the holds close: vi.waitFor's default 1 s is no bound for a loaded machine
    await vi.waitFor(async () => expect(await keys()).toEqual([["r:after-holds", -7_000_000], ["r", -2_000_000]]), { timeout: 10_000, interval: 50 });
    await ledger.flush();
    expect(await ledger.balance("u")).toBe(0);
    expect((await ledger.verify("u")).ok).toBe(true);
    // refunded money that was spent stays spent: 1 USD charged, 9 taken back, 10 refunded
    const entries = await ledger.entries("u", { limit: 100 });
    expect(entries.find((e) => e.idempotencyKey === "r:after-holds")?.meta).toEqual({ afterHolds: true });
  });

  it("a dispute's withdrawal does not wait for holds (its reinstatement gives back what the withdrawal took, no more)", async () => {
    const ledger = await instance(freshDb());
    await ledger.credit("u", 10_000_000, { kind: "purchase", idempotencyKey: "c" });
    expect((await ledger.hold("u", 4_000_000, { holdId: "h" })).ok).toBe(true);
    expect(await ledger.debit("u", 10_000_000, { kind: "dispute", idempotencyKey: "d" })).toMatchObject({ taken: 6_000_000, shortfall: 4_000_000 });
    await ledger.release("u", "h");
    await ledger.flush();
    expect(await ledger.balance("u")).toBe(4_000_000);
    expect((await ledger.entries("u")).filter((e) => e.kind === "dispute")).toHaveLength(1);
  });

  it("keeps only its unique index on FerretDB's SQLite backend, where no other index serves a query", async () => {
    const dbName = freshDb();
    const db = await connectDatabase(mongo.uri.replace(/\/[^/]*$/, `/${dbName}`));
    try {
      // an index left by an earlier version, which built them everywhere
      await db.connection.collection("ledger_entries").createIndex({ userId: 1, seq: -1 }, { name: "user_seq" });
      await instance(dbName);
      const names = (await db.connection.collection("ledger_entries").indexes()).map((i) => i.name).sort();
      expect(names).toEqual(["_id_", "idempotency_key_unique"]);
    } finally {
      await db.close();
    }
  });

  it("holds the worst case and settles to the real cost, exactly once", async () => {
    const ledger = await instance(freshDb());
    await ledger.credit("u", 1_000, { kind: "purchase", idempotencyKey: "c" });
    expect(await ledger.hold("u", 300, { holdId: "h1" })).toEqual({ ok: true, balance: 700 });
    expect(await ledger.balance("u")).toBe(700);
    await ledger.settle("u", "h1", 120);
    expect(await ledger.balance("u")).toBe(880);
    await ledger.settle("u", "h1", 120);
    await ledger.release("u", "h1");
    expect(await ledger.balance("u")).toBe(880);
    await ledger.flush();
    // the reservation took what the balance had (less than a whole chunk), one charge drew 120 from it, the rest went back
    const kinds = (await ledger.entries("u")).map((e) => [e.kind, e.amount, e.cost ?? null]);
    expect(kinds).toEqual([["release", 880, null], ["settle", 0, 120], ["hold", -1_000, null], ["purchase", 1_000, null]]);
    expect(await ledger.balance("u")).toBe(880);
    expect((await ledger.verify("u")).ok).toBe(true);
  });

  it("a settle with a usage record is written even at cost 0; flushCharges writes it and keeps the reservation", async () => {
    const ledger = await instance(freshDb());
    await ledger.credit("u", 1_000, { kind: "purchase", idempotencyKey: "c" });
    await ledger.hold("u", 300, { holdId: "free" });
    await ledger.hold("u", 300, { holdId: "paid" });
    await ledger.hold("u", 300, { holdId: "silent" });
    await ledger.settle("u", "free", 0, { model: "m", promptTokens: 3 });
    await ledger.settle("u", "paid", 50, { model: "m", promptTokens: 7 });
    await ledger.settle("u", "silent", 0);
    await ledger.flushCharges("u");
    const entries = await ledger.entries("u");
    expect(entries.map((e) => [e.kind, e.amount, e.cost ?? null, e.holdId ?? null, e.meta ?? null])).toEqual([
      ["settle", 0, 50, "paid", { model: "m", promptTokens: 7 }],
      ["settle", 0, 0, "free", { model: "m", promptTokens: 3 }],
      ["hold", -1_000, null, null, null],
      ["purchase", 1_000, null, null, null],
    ]);
    // nothing given back yet: the rest of the reservation still serves requests without a write
    expect(await ledger.balance("u")).toBe(950);
    await ledger.flush();
    expect((await ledger.entries("u", { limit: 1 }))[0]).toMatchObject({ kind: "release", amount: 950 });
    expect((await ledger.verify("u")).ok).toBe(true);
  });

  it("flushCharges also waits for charges a background flush is writing (read-your-writes for usage queries)", async () => {
    const ledger = await instance(freshDb());
    await ledger.credit("u", 10_000, { kind: "purchase", idempotencyKey: "c" });
    for (let round = 0; round < 5; round++) {
      await ledger.hold("u", 100, { holdId: `h${round}` });
      await ledger.settle("u", `h${round}`, 10, { model: "m" });
      // the periodic flush takes the charge off the queue, then flushCharges runs while it is being written
      const background = ledger.flush();
      await new Promise((resolve) => setImmediate(resolve));
      await ledger.flushCharges("u");
      expect((await ledger.entries("u", { kinds: ["settle"] })).map((e) => e.holdId)).toContain(`h${round}`);
      await background;
    }
  });

  it("serves many requests from one reservation: one write per top-up, not per request", async () => {
    const ledger = await instance(freshDb());
    await ledger.credit("u", 100_000_000, { kind: "purchase", idempotencyKey: "c" });
    for (let i = 0; i < 10; i++) {
      expect((await ledger.hold("u", 1_000, { holdId: `r${i}` })).ok).toBe(true);
      await ledger.settle("u", `r${i}`, 400);
    }
    expect((await ledger.entries("u")).map((e) => e.kind)).toEqual(["hold", "purchase"]);
    expect(await ledger.balance("u")).toBe(100_000_000 - 4_000);
    await ledger.flush();
    const entries = await ledger.entries("u");
    expect(entries.filter((e) => e.kind === "settle").map((e) => e.cost)).toEqual(Array(10).fill(400));
    expect(entries.reduce((s, e) => s + e.amount, 0)).toBe(100_000_000 - 4_000);
  });

  it("charges a cost above the hold from the rest of the reservation, never below zero; a release charges nothing", async () => {
    const ledger = await instance(freshDb());
    await ledger.credit("u", 10_000, { kind: "purchase", idempotencyKey: "c" });
    await ledger.hold("u", 100, { holdId: "a" });
    expect(ledger.chargeable("u", "a", 5_000)).toBe(5_000);
    expect(await ledger.settle("u", "a", 5_000, { model: "m" })).toBe(5_000);
    expect(ledger.chargeable("u", "a", 5_000)).toBe(0);
    expect(await ledger.settle("u", "a", 5_000)).toBe(0);
    await ledger.hold("u", 200, { holdId: "b" });
    await ledger.release("u", "b");
    expect(await ledger.balance("u")).toBe(5_000);
    // Only 5,000 left: a 9,000 cost takes it all and records the rest as uncharged.
    await ledger.hold("u", 100, { holdId: "c" });
    expect(await ledger.settle("u", "c", 9_000, { model: "m" })).toBe(5_000);
    expect(await ledger.balance("u")).toBe(0);
    await ledger.flush();
    const entries = await ledger.entries("u");
    expect(await ledger.balance("u")).toBe(0);
    expect(entries.reduce((s, e) => s + e.amount, 0)).toBe(0);
    expect(entries.filter((e) => e.kind === "settle").map((e) => [e.cost, e.meta?.uncharged])).toEqual([[5_000, 4_000], [5_000, undefined]]);
    expect((await ledger.verify("u")).ok).toBe(true);
  });

  it("tops a cost above the hold up from the balance when the reservation was given back while the request ran", async () => {
    const clock = new ManualClock();
    const ledger = await instance(freshDb(), clock);
    await ledger.credit("u", 3_000_000, { kind: "purchase", idempotencyKey: "c" });
    await ledger.hold("u", 100, { holdId: "slow" });
    // the user looks idle: the unused reservation goes back, only the hold stays reserved
    clock.advance(5_000);
    await ledger.flush();
    expect(ledger.chargeable("u", "slow", 5_000)).toBe(100);
    expect(await ledger.settle("u", "slow", 5_000, { model: "m" })).toBe(5_000);
    expect(await ledger.balance("u")).toBe(3_000_000 - 5_000);
    // more than the balance has: what it has, the rest recorded as uncharged
    await ledger.hold("u", 100, { holdId: "huge" });
    clock.advance(5_000);
    await ledger.flush();
    await ledger.cover("u", "huge", 4_000_000);
    expect(ledger.chargeable("u", "huge", 4_000_000)).toBe(2_995_000);
    expect(await ledger.settle("u", "huge", 4_000_000, { model: "m" })).toBe(2_995_000);
    expect(await ledger.balance("u")).toBe(0);
    await ledger.flush();
    const entries = await ledger.entries("u");
    expect(entries.reduce((s, e) => s + e.amount, 0)).toBe(0);
    expect(entries.filter((e) => e.kind === "settle").map((e) => [e.cost, e.meta?.uncharged])).toEqual([[2_995_000, 1_005_000], [5_000, undefined]]);
    expect((await ledger.verify("u")).ok).toBe(true);
  });

  it("refuses a hold the balance does not cover", async () => {
    const ledger = await instance(freshDb());
    await ledger.credit("u", 99, { kind: "purchase", idempotencyKey: "c" });
    expect(await ledger.hold("u", 100, { holdId: "x" })).toEqual({ ok: false, balance: 99 });
    await expect(ledger.credit("u", -100, { kind: "adjustment", idempotencyKey: "adj" })).rejects.toThrow(/negative/);
    expect(await ledger.balance("u")).toBe(99);
  });

  it("never goes below zero under concurrency: K covered, 4K concurrent holds, two instances", async () => {
    const name = freshDb();
    const a = await instance(name);
    const b = await instance(name);
    const K = 12;
    await a.credit("u", K * 1_000, { kind: "purchase", idempotencyKey: "c" });
    const results = await Promise.all(
      Array.from({ length: 4 * K }, (_, i) => (i % 2 ? a : b).hold("u", 1_000, { holdId: `h${i}` })),
    );
    expect(results.filter((r) => r.ok).length).toBeLessThanOrEqual(K);
    expect(results.filter((r) => r.ok).length).toBeGreaterThan(0);
    await Promise.all(results.map((r, i) => (r.ok ? (i % 2 ? a : b).settle("u", `h${i}`, 1_000) : undefined)));
    await Promise.all([a.flush(), b.flush()]);
    const entries = await a.entries("u", { limit: 500 });
    const charged = entries.filter((e) => e.kind === "settle").reduce((s, e) => s + (e.cost ?? 0), 0);
    expect(charged).toBe(results.filter((r) => r.ok).length * 1_000);
    expect(await a.balance("u")).toBe(K * 1_000 - charged);
    expect(entries.reduce((s, e) => s + e.amount, 0)).toBe(K * 1_000 - charged);
    const verified = await a.verify("u");
    expect(verified.problems).toEqual([]);
  });

  it("a balance below one reservation chunk goes back at the next flush, busy or not: another instance serving the user is not refused", async () => {
    const name = freshDb();
    // `a` flushes every 20 ms in the background; its clock stands still, so the user never counts as idle there
    const a = await instance(name, new ManualClock(), { flushIntervalMs: 20 });
    const b = await instance(name);
    await a.credit("u", 500_000, { kind: "purchase", idempotencyKey: "c" });
    expect((await a.hold("u", 1_000, { holdId: "on-a" })).ok).toBe(true);
    await a.settle("u", "on-a", 400);
    // `a` took the whole balance (less than a chunk of $1); a flush later the rest is stored again (waited for, not
    // timed: on a loaded machine one 20 ms flush may take longer than any fixed sleep)
    await vi.waitFor(async () => expect((await b.hold("u", 1_000, { holdId: "on-b" })).ok).toBe(true), { timeout: 5_000, interval: 50 });
    await b.settle("u", "on-b", 400);
    await Promise.all([a.flush(), b.flush()]);
    expect(await a.balance("u")).toBe(500_000 - 800);
    expect((await a.verify("u")).problems).toEqual([]);
  });

  it("reads an exact balance while reservations are topped up and given back: it never rises while only charges happen", async () => {
    const db = await connectDatabase(mongo.uri.replace(/\/[^/]*$/, `/${freshDb()}`));
    // small chunks and no idle time: a top-up or a release is in transit most of the time
    const ledger = await createLedger(db, new ManualClock(), {
      holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0, reservation: { minChunk: 3_000, maxChunk: 3_000, chunkMultiplier: 1, idleMs: 0 },
    });
    open.push({ db, ledger });
    const initial = 400_000;
    await ledger.credit("u", initial, { kind: "purchase", idempotencyKey: "c" });
    let spending = true;
    let charged = 0;
    const spender = async (w: number) => {
      for (let i = 0; i < 60; i++) {
        const holdId = `w${w}-${i}`;
        if (!(await ledger.hold("u", 1_000, { holdId })).ok) break;
        const cost = await ledger.settle("u", holdId, 1_000);
        charged += cost;
        if (i % 3 === 0) await ledger.flush();
      }
    };
    const reads: number[] = [];
    const reader = async () => {
      while (spending) reads.push(await ledger.balance("u"));
    };
    const readers = [reader(), reader()];
    await Promise.all([0, 1, 2, 3].map(spender));
    spending = false;
    await Promise.all(readers);
    await ledger.flush();
    expect(reads.length).toBeGreaterThan(2);
    // a settled hold of 1,000 charged 1,000: the balance only ever goes down (holds in flight are not counted)
    const rises = reads.filter((value, i) => i > 0 && value > (reads[i - 1] ?? 0));
    expect(rises).toEqual([]);
    expect(Math.max(...reads)).toBeLessThanOrEqual(initial);
    expect(await ledger.balance("u")).toBe(initial - charged);
  });

  it("grants a payment once when delivered concurrently to two instances", async () => {
    const name = freshDb();
    const a = await instance(name);
    const b = await instance(name);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).credit("u", 10_000_000, { kind: "purchase", idempotencyKey: "pi:same" })),
    );
    expect(results.filter((r) => r.applied)).toHaveLength(1);
    expect(await b.balance("u")).toBe(10_000_000);
  });

  it("releases the reservation of an instance that stopped beating, once", async () => {
    const name = freshDb();
    const clock = new ManualClock(1_000_000);
    const crashed = await instance(name, clock);
    const survivor = await instance(name, clock);
    await survivor.credit("u", 100_000, { kind: "purchase", idempotencyKey: "c" });
    await crashed.hold("u", 1_000, { holdId: "served" });
    await crashed.settle("u", "served", 600);
    await crashed.flush(); // the charge is written, then the "crash": no more beats, one request still in flight
    await crashed.hold("u", 1_000, { holdId: "in-flight" });
    expect(await survivor.balance("u")).toBeLessThan(100_000 - 600);
    expect(await survivor.releaseExpiredHolds()).toBe(0);
    clock.advance(61_000);
    expect(await survivor.releaseExpiredHolds()).toBe(1);
    expect(await survivor.balance("u")).toBe(100_000 - 600);
    expect(await survivor.releaseExpiredHolds()).toBe(0);
    expect((await survivor.verify()).ok).toBe(true);
  });

  it("an instance that finds itself declared dead takes one new identity, and requests meanwhile wait for it (no duplicate registration)", async () => {
    const name = freshDb();
    const stalledClock = new ManualClock(1_000_000);
    const sweeperClock = new ManualClock(1_000_000);
    const stalled = await instance(name, stalledClock);
    const sweeper = await instance(name, sweeperClock);
    await sweeper.credit("u", 100_000, { kind: "purchase", idempotencyKey: "c" });
    expect((await stalled.hold("u", 1_000, { holdId: "before" })).ok).toBe(true);
    sweeperClock.advance(61_000);
    expect(await sweeper.releaseExpiredHolds()).toBe(1);
    stalledClock.advance(61_000);
    // the new identity's registration is slow (a busy database): a request and a sweep come meanwhile
    const registerInstance = LedgerRepository.prototype.registerInstance;
    const registered: string[] = [];
    const spy = vi.spyOn(LedgerRepository.prototype, "registerInstance").mockImplementation(async function (this: LedgerRepository, id, at) {
      registered.push(id);
      await new Promise((resolve) => setTimeout(resolve, 300));
      return registerInstance.call(this, id, at);
    });
    try {
      const flushed = stalled.flush();
      await vi.waitFor(() => expect(registered).toHaveLength(1), { timeout: 10_000, interval: 10 });
      const [held] = await Promise.all([stalled.hold("u", 1_000, { holdId: "after" }), stalled.releaseExpiredHolds(), flushed]);
      expect(held.ok).toBe(true);
      expect(registered).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
    await stalled.settle("u", "after", 400);
    await stalled.flush();
    expect(await sweeper.balance("u")).toBe(100_000 - 400);
    expect((await sweeper.verify()).ok).toBe(true);
  });

  it("keeps balance = ledger sum over a random interleaving from two instances", async () => {
    const name = freshDb();
    const a = await instance(name);
    const b = await instance(name);
    await a.credit("u", 50_000, { kind: "purchase", idempotencyKey: "seed" });
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const ops: Array<Promise<unknown>> = [];
    for (let i = 0; i < 120; i++) {
      const l = rnd() < 0.5 ? a : b;
      const r = rnd();
      if (r < 0.15) ops.push(l.credit("u", 1_000, { kind: "purchase", idempotencyKey: `p${Math.floor(rnd() * 20)}` }));
      else ops.push(l.hold("u", 700, { holdId: `h${i}` }).then(async (h) => {
        if (!h.ok) return;
        if (rnd() < 0.7) await l.settle("u", `h${i}`, Math.floor(rnd() * 900));
        else await l.release("u", `h${i}`);
      }));
    }
    await Promise.all(ops);
    await Promise.all([a.flush(), b.flush()]);
    const entries = await a.entries("u", { limit: 500 });
    const sum = entries.reduce((s, e) => s + e.amount, 0);
    expect(await b.balance("u")).toBe(sum);
    expect(sum).toBeGreaterThanOrEqual(0);
    expect((await a.verify("u")).problems).toEqual([]);
    // every settled request charged exactly once
    const closeKeys = entries.filter((e) => e.kind === "settle").map((e) => e.idempotencyKey);
    expect(new Set(closeKeys).size).toBe(closeKeys.length);
  });
});
