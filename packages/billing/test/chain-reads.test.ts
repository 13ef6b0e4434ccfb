// Per-account reads of the ledger by `_id` only (balance, history, the newest entries): exact against a brute-force
// reading of the same chain, with concurrent writers, a stale or missing head hint and chains older than the links.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDatabase, startFerretdb, type Database, type EmbeddedMongo } from "@gw/db";
import { ManualClock, randomBase62 } from "@gw/shared";
import { filtersSent } from "@gw/test-support";
import { HEADS_COLLECTION } from "../src/ledger/chain-reader";
import { ChainWriter, type Movement } from "../src/ledger/chain-writer";
import { createLedger } from "../src/ledger/index";
import { ChainFold, EMPTY_CHAIN } from "../src/ledger/checkpoints";
import { CREDIT_SKIP, entryId, LedgerRepository, type LedgerDoc } from "../src/ledger/repository";
import { CREDIT_KINDS, type LedgerEntryKind } from "../src/ledger/types";

let mongo: EmbeddedMongo;
let dir: string;
const dbs: Database[] = [];

async function freshRepo(): Promise<{ db: Database; repo: LedgerRepository }> {
  const db = await connectDatabase(mongo.uri.replace(/\/[^/]*$/, `/reads_${randomBase62(8)}`));
  dbs.push(db);
  const repo = new LedgerRepository(db);
  await repo.ensureIndexes();
  return { db, repo };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "gw-reads-"));
  mongo = await startFerretdb({ dir });
});

afterAll(async () => {
  for (const db of dbs) await db.close();
  await mongo.stop();
  rmSync(dir, { recursive: true, force: true });
});

const KINDS: LedgerEntryKind[] = ["purchase", "hold", "settle", "settle", "settle", "release", "adjustment", "settle", "refund"];

/** A pseudo-random movement (deterministic per index). */
function movement(i: number, tag: string): Movement {
  const kind = KINDS[(i * 7 + 3) % KINDS.length] ?? "settle";
  const amount = kind === "hold" || kind === "refund" ? -((i % 5) + 1) : kind === "settle" ? 0 : (i % 13) + 100;
  return { kind, amount, idempotencyKey: `${tag}:${i}`, requireCover: false };
}

/** The brute-force view: the whole chain by a query on userId. */
async function bruteForce(repo: LedgerRepository, userId: string) {
  const chain = await repo.collection.find({ userId }).sort({ seq: 1 }).toArray();
  const last = chain[chain.length - 1];
  const credits = chain.filter((d) => (CREDIT_KINDS as readonly string[]).includes(d.kind)).reverse();
  return { chain, balance: last?.balanceAfter ?? 0, seq: last?.seq ?? 0, credits };
}

/** Every page of the history, as the billing route reads it. */
async function historyPages(repo: LedgerRepository, userId: string, limit: number): Promise<LedgerDoc[]> {
  const all: LedgerDoc[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await repo.entries(userId, { limit, beforeSeq: before, kinds: [...CREDIT_KINDS] });
    all.push(...page);
    if (page.length < limit) return all;
    before = page[page.length - 1]?.seq;
  }
}

describe("chain reads by _id", () => {
  it("balance, history and newest entries equal a brute-force reading, with two instances writing at once", async () => {
    const { repo } = await freshRepo();
    const a = new ChainWriter(repo, new ManualClock());
    const b = new ChainWriter(new LedgerRepository(dbs[dbs.length - 1] as Database), new ManualClock());
    await Promise.all([
      ...Array.from({ length: 120 }, (_, i) => a.append("u", movement(i, "a"))),
      ...Array.from({ length: 120 }, (_, i) => b.append("u", movement(i + 1000, "b"))),
    ]);
    const truth = await bruteForce(repo, "u");
    expect(truth.seq).toBe(240);
    expect(await repo.head("u")).toMatchObject({ seq: truth.seq, balance: truth.balance });
    expect((await historyPages(repo, "u", 7)).map((d) => d._id)).toEqual(truth.credits.map((d) => d._id));
    expect((await repo.entries("u", { limit: 10 })).map((d) => d.seq)).toEqual(truth.chain.slice(-10).reverse().map((d) => d.seq));
    expect((await repo.entries("u", { limit: 5, beforeSeq: 100, kinds: ["settle"] })).map((d) => d._id))
      .toEqual(truth.chain.filter((d) => d.kind === "settle" && d.seq < 100).reverse().slice(0, 5).map((d) => d._id));
    expect(await repo.head("nobody")).toEqual({ seq: 0, balance: 0, lastCredit: 0 });
    expect(await repo.entries("nobody", { limit: 5, kinds: [...CREDIT_KINDS] })).toEqual([]);
  });

  it("a stale, missing or lost head hint still gives the exact head (it is only a starting point)", async () => {
    const { db, repo } = await freshRepo();
    const writer = new ChainWriter(repo, new ManualClock());
    for (let i = 0; i < 37; i++) await writer.append("u", movement(i, "h"));
    const truth = await bruteForce(repo, "u");
    const hints = db.connection.collection<{ _id: string; seq: number }>(HEADS_COLLECTION);
    expect(await hints.findOne({ _id: "u" })).toEqual({ _id: "u", seq: 37 });
    await hints.updateOne({ _id: "u" }, { $set: { seq: 3 } });
    expect(await repo.head("u")).toMatchObject({ seq: 37, balance: truth.balance });
    await hints.deleteOne({ _id: "u" });
    expect(await repo.head("u")).toMatchObject({ seq: 37, balance: truth.balance });
    // a writer on a stale hint and no cached head appends after the true head
    writer.forget();
    await hints.updateOne({ _id: "u" }, { $set: { seq: 1 } });
    expect(await writer.append("u", { kind: "bonus", amount: 5, idempotencyKey: "late", requireCover: false })).toEqual({ status: "applied", balance: truth.balance + 5, amount: 5 });
    expect((await bruteForce(repo, "u")).seq).toBe(38);
    expect((await historyPages(repo, "u", 4))[0]?._id).toBe(entryId("u", 38));
  });

  it("a chain written before the links: its history is complete, older entries read by the query once", async () => {
    const { db, repo } = await freshRepo();
    const legacy: LedgerDoc[] = [];
    let balance = 0;
    for (let seq = 1; seq <= 20; seq++) {
      const kind: LedgerEntryKind = seq % 4 === 1 ? "purchase" : "settle";
      const amount = kind === "purchase" ? 1000 : 0;
      balance += amount;
      legacy.push({ _id: entryId("old", seq), userId: "old", seq, kind, amount, balanceAfter: balance, idempotencyKey: `old:${seq}`, createdAt: new Date(0) });
    }
    await repo.collection.insertMany(legacy);
    const writer = new ChainWriter(repo, new ManualClock());
    for (let i = 0; i < 12; i++) await writer.append("old", movement(i, "new"));
    const truth = await bruteForce(repo, "old");
    expect((await historyPages(repo, "old", 3)).map((d) => d._id)).toEqual(truth.credits.map((d) => d._id));
    const ledger = await createLedger(db, new ManualClock(), { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0 });
    expect(await ledger.verify("old")).toMatchObject({ ok: true });
    expect(await ledger.balance("old")).toBe(truth.balance);
    await ledger.close();
  });

  it("reads issue `_id` equality filters only, so they cannot fall back to scanning the collection", async () => {
    const { repo } = await freshRepo();
    const writer = new ChainWriter(repo, new ManualClock());
    for (let i = 0; i < 60; i++) await writer.append("u", movement(i, "q"));
    const filters = (await filtersSent(async () => {
      await repo.head("u");
      await historyPages(repo, "u", 5);
      await repo.entries("u", { limit: 10 });
    })).map((s) => s.filter);
    expect(filters.length).toBeGreaterThan(0);
    for (const filter of filters) expect(Object.keys(filter as object)).toEqual(["_id"]);
    for (const filter of filters) expect(typeof (filter as { _id: unknown })._id).toBe("string");
  });

  it("a history page follows the credits' skip lists: the head, then one batch of reads per page", async () => {
    const { repo } = await freshRepo();
    const a = new ChainWriter(repo, new ManualClock());
    const b = new ChainWriter(new LedgerRepository(dbs[dbs.length - 1] as Database), new ManualClock());
    // 200 credits among 600 entries, from two instances at once (each planning on a head the other may have moved)
    await Promise.all(["a", "b"].map((tag, w) => Promise.all(Array.from({ length: 300 }, (_, i) => (w ? b : a).append("u", i % 3 === 0
      ? { kind: i % 2 ? "bonus" : "purchase", amount: 10, idempotencyKey: `${tag}:${i}`, requireCover: false }
      : { kind: "adjustment", amount: 0, idempotencyKey: `${tag}:${i}`, requireCover: false })))));
    await Promise.all(Array.from({ length: 400 }, (_, i) => a.append("u", { kind: "settle", amount: 0, idempotencyKey: `s:${i}`, requireCover: false })));
    const truth = await bruteForce(repo, "u");
    expect(truth.credits).toHaveLength(600);
    // every credit's skip list is the positions of the credits before it, newest first
    const fold = new ChainFold("u", EMPTY_CHAIN);
    for (const doc of truth.chain) fold.add(doc);
    expect(fold.problems).toEqual([]);
    const newest = truth.credits[0];
    expect(newest?.credits).toEqual(truth.credits.slice(1, 1 + CREDIT_SKIP).map((d) => d.seq));

    expect((await historyPages(repo, "u", 50)).map((d) => d._id)).toEqual(truth.credits.map((d) => d._id));
    expect((await repo.entries("u", { limit: 7, beforeSeq: 300, kinds: ["purchase"] })).map((d) => d._id))
      .toEqual(truth.credits.filter((d) => d.kind === "purchase" && d.seq < 300).slice(0, 7).map((d) => d._id));
    // a page of 20 from the newest: the head search, the newest credit, then its 19 predecessors at once
    const positionsRead = async (run: () => Promise<unknown>) =>
      new Set((await filtersSent(run)).filter((s) => s.collection === "ledger_entries").map((s) => (s.filter as { _id: string })._id));
    const headSearch = await positionsRead(() => repo.head("u"));
    const page = await positionsRead(() => repo.entries("u", { limit: 20, kinds: [...CREDIT_KINDS] }));
    expect([...page].sort()).toEqual([...headSearch, ...truth.credits.slice(0, 20).map((d) => d._id)].sort());
  });

  it("the audit reports a credit whose skip list is wrong; one without a skip list is read along its link", async () => {
    const { db, repo } = await freshRepo();
    const writer = new ChainWriter(repo, new ManualClock());
    for (let i = 0; i < 40; i++) await writer.append("u", { kind: i % 2 ? "bonus" : "settle", amount: i % 2 ? 5 : 0, idempotencyKey: `k:${i}`, requireCover: false });
    const truth = await bruteForce(repo, "u");
    // entries written before the skip lists carry only their link
    await repo.collection.updateMany({ userId: "u", seq: { $lt: 20 } }, { $unset: { credits: "" } });
    expect((await historyPages(repo, "u", 3)).map((d) => d._id)).toEqual(truth.credits.map((d) => d._id));
    await repo.collection.updateOne({ _id: entryId("u", 38) }, { $set: { credits: [36, 30] } });
    const ledger = await createLedger(db, new ManualClock(), { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0 });
    const verdict = await ledger.verify("u");
    expect(verdict.ok).toBe(false);
    await ledger.close();
  });
});
