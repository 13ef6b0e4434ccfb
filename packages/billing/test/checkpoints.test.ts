// Ledger checkpoints (packages/billing/src/ledger/checkpoints.ts) and the reconcile that verifies from them
// (chain-audit.ts): exact against a brute-force sum of the same chain, with two instances writing at once; a tampered
// entry found after the last verified checkpoint by every run, before it by a full run; reads by `_id` only.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDatabase, startFerretdb, type Database, type EmbeddedMongo } from "@gw/db";
import { ManualClock, randomBase62 } from "@gw/shared";
import { filtersSent } from "@gw/test-support";
import { ChainWriter, type Movement } from "../src/ledger/chain-writer";
import { CHECKPOINT_EVERY, ChainFold, Checkpoints, sumsOf, type ChainSums } from "../src/ledger/checkpoints";
import { createLedger } from "../src/ledger/index";
import { entryId, LedgerRepository, type LedgerDoc } from "../src/ledger/repository";
import { CREDIT_KINDS, type LedgerEntryKind } from "../src/ledger/types";

let mongo: EmbeddedMongo;
let dir: string;
const dbs: Database[] = [];

async function freshDb(): Promise<Database> {
  const db = await connectDatabase(mongo.uri.replace(/\/[^/]*$/, `/cp_${randomBase62(8)}`));
  dbs.push(db);
  await new LedgerRepository(db).ensureIndexes();
  return db;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "gw-checkpoints-"));
  mongo = await startFerretdb({ dir });
});

afterAll(async () => {
  for (const db of dbs) await db.close();
  await mongo.stop();
  rmSync(dir, { recursive: true, force: true });
});

const KINDS: LedgerEntryKind[] = ["purchase", "hold", "settle", "settle", "settle", "release", "adjustment", "settle", "refund"];

/** A pseudo-random movement (deterministic per index), never taking the balance below zero (it starts with a purchase). */
function movement(i: number, tag: string): Movement {
  const kind = i === 0 ? "purchase" : KINDS[(i * 7 + 3) % KINDS.length] ?? "settle";
  const amount = kind === "hold" || kind === "refund" ? -((i % 5) + 1) : kind === "settle" ? 0 : (i % 13) + 100;
  const m: Movement = { kind, amount, idempotencyKey: `${tag}:${i}`, requireCover: false };
  if (kind === "settle") m.cost = (i % 17) + 1;
  return m;
}

/** The chain's sums at `seq` by brute force: every entry up to it, read with a query. */
async function bruteSums(repo: LedgerRepository, userId: string, seq: number): Promise<Omit<ChainSums, "digest">> {
  const chain = (await repo.collection.find({ userId }).sort({ seq: 1 }).toArray()).filter((d) => d.seq <= seq);
  const credits = chain.filter((d) => (CREDIT_KINDS as readonly string[]).includes(d.kind));
  return {
    seq,
    balance: chain.reduce((a, d) => a + d.amount, 0),
    lastCredit: credits[credits.length - 1]?.seq ?? 0,
    credited: chain.reduce((a, d) => a + Math.max(d.amount, 0), 0),
    debited: chain.reduce((a, d) => a + Math.min(d.amount, 0), 0),
    charged: chain.reduce((a, d) => a + (d.kind === "settle" ? d.cost ?? 0 : 0), 0),
  };
}

const withoutDigest = ({ digest: _digest, ...rest }: ChainSums): Omit<ChainSums, "digest"> => rest;

describe("checkpoints", () => {
  it("equal a brute-force sum at each multiple and lead to the exact sums at random points, with two instances writing at once", async () => {
    const db = await freshDb();
    // two instances: each its own repository, checkpoints and writer on the same database
    const instances = [0, 1].map(() => {
      const repo = new LedgerRepository(db);
      const checkpoints = new Checkpoints(db, repo.reader);
      return { repo, checkpoints, writer: new ChainWriter(repo, new ManualClock()) };
    });
    const [a, b] = instances as [typeof instances[0], typeof instances[0]];
    const total = 2 * CHECKPOINT_EVERY + 300;
    await a.writer.append("u", movement(0, "a"));
    await Promise.all([
      ...Array.from({ length: total / 2 }, (_, i) => a.writer.append("u", movement(i + 1, "a"))),
      ...Array.from({ length: total / 2 - 1 }, (_, i) => b.writer.append("u", movement(i + 1, "b"))),
    ]);
    // both instances build the checkpoints at once (the second one from nothing: it folds the first one too)
    await Promise.all([a.checkpoints.ensure("u", 2 * CHECKPOINT_EVERY), b.checkpoints.ensure("u", 2 * CHECKPOINT_EVERY)]);
    for (const seq of [CHECKPOINT_EVERY, 2 * CHECKPOINT_EVERY]) {
      const stored = await a.checkpoints.at("u", seq);
      if (!stored) throw new Error(`no checkpoint at ${seq}`);
      expect(withoutDigest(sumsOf(stored))).toEqual(await bruteSums(a.repo, "u", seq));
    }
    expect(await db.connection.collection("ledger_checkpoints").countDocuments({ userId: "u" })).toBe(2);
    // from the checkpoint below a random point, its entries by `_id` give the point's exact sums
    for (const point of [1, 517, CHECKPOINT_EVERY, CHECKPOINT_EVERY + 1, 1_800, 2 * CHECKPOINT_EVERY + 150, total]) {
      const below = point - (point % CHECKPOINT_EVERY);
      const start = below === 0 ? undefined : await a.checkpoints.at("u", below);
      const fold = new ChainFold("u", start ? sumsOf(start) : { seq: 0, balance: 0, lastCredit: 0, credited: 0, debited: 0, charged: 0, digest: "" });
      for (const doc of await a.repo.reader.range("u", below + 1, point)) fold.add(doc);
      expect(fold.problems).toEqual([]);
      expect(withoutDigest(fold.sums)).toEqual(await bruteSums(a.repo, "u", point));
    }
  }, 240_000);

  it("two instances that build the same checkpoint at once store one, with the same content", async () => {
    const db = await freshDb();
    const repo = new LedgerRepository(db);
    const writer = new ChainWriter(repo, new ManualClock());
    for (let i = 0; i < CHECKPOINT_EVERY + 10; i++) void writer.append("v", movement(i, "v"));
    await writer.append("v", movement(CHECKPOINT_EVERY + 10, "v"));
    const [one, two] = await Promise.all([new Checkpoints(db, repo.reader), new Checkpoints(db, new LedgerRepository(db).reader)].map((c) => c.ensure("v", CHECKPOINT_EVERY)));
    expect(one).not.toBeNull();
    expect(two).toEqual(one);
    expect(await db.connection.collection("ledger_checkpoints").countDocuments({ userId: "v" })).toBe(1);
  }, 240_000);

  it("are not written over a chain that does not verify", async () => {
    const db = await freshDb();
    const repo = new LedgerRepository(db);
    const docs: LedgerDoc[] = Array.from({ length: CHECKPOINT_EVERY }, (_, i) => ({
      _id: entryId("w", i + 1), userId: "w", seq: i + 1, kind: "purchase", amount: 1, balanceAfter: i + 1, idempotencyKey: `w:${i}`, createdAt: new Date(0),
    }));
    const wrong = docs[500] as LedgerDoc;
    wrong.balanceAfter += 1;
    await repo.collection.insertMany(docs);
    expect(await new Checkpoints(db, repo.reader).ensure("w", CHECKPOINT_EVERY)).toBeNull();
    expect(await db.connection.collection("ledger_checkpoints").countDocuments({})).toBe(0);
  }, 240_000);
});

describe("reconcile from the last verified checkpoint", () => {
  it("finds a tampered entry after the checkpoint on every run, and one before it on a full run", async () => {
    const db = await freshDb();
    const ledger = await createLedger(db, new ManualClock(), { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0 });
    const repo = new LedgerRepository(db);
    const writer = new ChainWriter(repo, new ManualClock());
    const total = 2 * CHECKPOINT_EVERY + 100;
    for (let i = 0; i < total; i++) void writer.append("t", movement(i, "t"));
    await writer.append("t", movement(total, "t"));
    expect(await ledger.verify()).toEqual({ ok: true, users: 1, problems: [] });
    const verified = db.connection.collection<{ _id: string; seq: number }>("ledger_verified");
    expect(await verified.findOne({ _id: "t" })).toEqual({ _id: "t", seq: 2 * CHECKPOINT_EVERY });

    // after the last verified checkpoint: every run reads it
    const after = entryId("t", 2 * CHECKPOINT_EVERY + 40);
    await repo.collection.updateOne({ _id: after }, { $inc: { amount: 7 } });
    const tampered = await repo.collection.findOne({ _id: after });
    expect((await ledger.verify()).problems[0]).toBe(`t: seq ${2 * CHECKPOINT_EVERY + 40} balanceAfter ${tampered?.balanceAfter} != running sum ${(tampered?.balanceAfter ?? 0) + 7}`);
    await repo.collection.updateOne({ _id: after }, { $inc: { amount: -7 } });
    expect(await ledger.verify()).toMatchObject({ ok: true });

    // before it: a change the running sums do not show (a settle's charge) is found by the checkpoint's digest
    const settle = (await repo.reader.range("t", 1_000, 1_023)).find((d) => d.kind === "settle") as LedgerDoc;
    await repo.collection.updateOne({ _id: settle._id }, { $inc: { cost: 1 } });
    expect(await ledger.verify()).toMatchObject({ ok: true });
    expect((await ledger.verify(undefined, { full: true })).problems).toEqual([`t: checkpoint at seq ${CHECKPOINT_EVERY} does not match the entries before it`]);
    // and one the sums show, by them
    await repo.collection.updateOne({ _id: settle._id }, { $inc: { cost: -1, amount: 3 } });
    expect((await ledger.verify("t", { full: true })).problems[0]).toMatch(new RegExp(`^t: seq ${settle.seq} balanceAfter`));
    await ledger.close();
  }, 240_000);

  it("reads by `_id` only when it checks a chain and builds its checkpoints", async () => {
    const db = await freshDb();
    const ledger = await createLedger(db, new ManualClock(), { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0 });
    const repo = new LedgerRepository(db);
    const writer = new ChainWriter(repo, new ManualClock());
    for (let i = 0; i < CHECKPOINT_EVERY + 20; i++) void writer.append("q", movement(i, "q"));
    await writer.append("q", movement(CHECKPOINT_EVERY + 20, "q"));
    const filters = (await filtersSent(async () => {
      expect(await new Checkpoints(db, repo.reader).ensure("q", CHECKPOINT_EVERY)).not.toBeNull();
      expect(await ledger.repairGaps("q")).toEqual([]);
      expect(await ledger.verify("q")).toMatchObject({ ok: true });
      expect(await ledger.balance("q")).toBeGreaterThan(0);
    })).map((s) => s.filter);
    expect(filters.length).toBeGreaterThan(CHECKPOINT_EVERY);
    for (const filter of filters) expect(Object.keys(filter as object)).toEqual(["_id"]);
    for (const filter of filters) expect(typeof (filter as { _id: unknown })._id).toBe("string");
    await ledger.close();
  }, 240_000);
});
