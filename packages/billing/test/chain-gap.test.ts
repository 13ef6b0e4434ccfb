// A batched append that meets a used idempotency key part-way (the retry of a batch whose first try a crash cut
// short) must leave the chain whole. FerretDB applies an insert in chunks of 100 and, after a chunk failed, goes on
// with the next chunk even for an ordered insert: a batch of more than 100 entries left a hole in the chain.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDatabase, startFerretdb, type Database, type EmbeddedMongo } from "@gw/db";
import { ManualClock, randomBase62 } from "@gw/shared";
import { ChainWriter, type Movement } from "../src/ledger/chain-writer";
import { createLedger } from "../src/ledger/index";
import { entryId, LedgerRepository, type LedgerDoc } from "../src/ledger/repository";

let mongo: EmbeddedMongo;
let dir: string;
const dbs: Database[] = [];

async function freshRepo(): Promise<{ db: Database; repo: LedgerRepository }> {
  const db = await connectDatabase(mongo.uri.replace(/\/[^/]*$/, `/gap_${randomBase62(8)}`));
  dbs.push(db);
  const repo = new LedgerRepository(db);
  await repo.ensureIndexes();
  return { db, repo };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "gw-gap-"));
  mongo = await startFerretdb({ dir });
});

afterAll(async () => {
  for (const db of dbs) await db.close();
  await mongo.stop();
  rmSync(dir, { recursive: true, force: true });
});

const credit = (key: string, amount: number): Movement => ({ kind: "purchase", amount, idempotencyKey: key, requireCover: false });

describe("group commit after a partly applied batch", () => {
  it("a used idempotency key at position 2 of a 130-movement queue leaves no hole and counts every movement once", async () => {
    const { db, repo } = await freshRepo();
    const writer = new ChainWriter(repo, new ManualClock());
    // the first try of a movement, already stored (a crash lost its answer)
    expect(await writer.append("u", credit("retried", 1_000_000))).toMatchObject({ status: "applied" });
    // the next batch: its first entry goes alone (the queue drains at once), then 130 queue up behind it
    const outcomes = [writer.append("u", credit("first", 1))];
    for (let i = 0; i < 130; i++) outcomes.push(writer.append("u", i === 2 ? credit("retried", 1_000_000) : credit(`m${i}`, 10 + i)));
    const results = await Promise.all(outcomes);
    expect(results.filter((r) => r.status === "duplicate")).toHaveLength(1);
    expect(results.filter((r) => r.status === "applied")).toHaveLength(130);

    const chain = await repo.chain("u");
    expect(chain.map((d) => d.seq)).toEqual(Array.from({ length: 131 }, (_, i) => i + 1));
    const expected = 1_000_000 + 1 + Array.from({ length: 130 }, (_, i) => (i === 2 ? 0 : 10 + i)).reduce((a, b) => a + b, 0);
    expect(chain.at(-1)?.balanceAfter).toBe(expected);
    const ledger = await createLedger(db, new ManualClock(), { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0 });
    expect(await ledger.verify("u")).toEqual({ ok: true, users: 1, problems: [] });
    await ledger.close();
  });
});

describe("reconcile's repair of a hole an older version left", () => {
  /** Stores a chain as given (seq, amount, balanceAfter), holes and all. */
  async function storeChain(repo: LedgerRepository, userId: string, entries: Array<[number, number, number]>): Promise<void> {
    const docs: LedgerDoc[] = entries.map(([seq, amount, balanceAfter]) => ({
      _id: entryId(userId, seq), userId, seq, kind: amount < 0 ? "hold" : "purchase", amount, balanceAfter, idempotencyKey: `${userId}:k${seq}`, createdAt: new Date(0),
    }));
    await repo.collection.insertMany(docs);
  }

  it("fills a hole whose entries carried no money with empty entries: the balance stays", async () => {
    const { db, repo } = await freshRepo();
    // 3..5 missing; seq 6's balance says they changed nothing (settles of amount 0)
    await storeChain(repo, "z", [[1, 500, 500], [2, -100, 400], [6, 50, 450], [7, -20, 430]]);
    const ledger = await createLedger(db, new ManualClock(), { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0 });
    expect((await ledger.verify("z")).problems).toEqual(["z: gap or duplicate at seq 6 (expected 3)"]);
    expect(await ledger.repairGaps("z")).toEqual([{ userId: "z", from: 3, to: 5, counted: 0, corrected: 0 }]);
    expect(await ledger.verify("z")).toEqual({ ok: true, users: 1, problems: [] });
    expect(await ledger.balance("z")).toBe(430);
    expect(await ledger.repairGaps("z")).toEqual([]);
    await ledger.close();
  });

  it("a hole whose missing entries the later ones counted: filled with what they counted, and that much taken back at the end", async () => {
    const { db, repo } = await freshRepo();
    // seq 3 (a hold of -300) lost and written again at seq 5 by the old retry: seq 4 counted it, seq 5 counted it again
    await storeChain(repo, "h", [[1, 1_000, 1_000], [2, -100, 900], [4, -50, 550], [5, -300, 250]]);
    const ledger = await createLedger(db, new ManualClock(), { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0 });
    expect(await ledger.repairGaps()).toEqual([{ userId: "h", from: 3, to: 3, counted: -300, corrected: 300 }]);
    expect(await ledger.verify()).toEqual({ ok: true, users: 1, problems: [] });
    // every movement stored once: 1000 - 100 - 50 - 300
    expect(await ledger.balance("h")).toBe(550);
    const chain = await repo.chain("h");
    expect(chain.map((d) => [d.seq, d.kind, d.amount, d.balanceAfter])).toEqual([
      [1, "purchase", 1_000, 1_000], [2, "hold", -100, 900], [3, "gap", -300, 600], [4, "hold", -50, 550], [5, "hold", -300, 250], [6, "adjustment", 300, 550],
    ]);
    await ledger.close();
  });
});
