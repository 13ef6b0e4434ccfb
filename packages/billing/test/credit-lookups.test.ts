// Lookups by idempotency key in one user's credit entries, and the newest credit of a chain older than the credit
// links: read by `_id` only (the embedded FerretDB answers any other filter by reading the whole collection).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDatabase, startFerretdb, type Database, type EmbeddedMongo } from "@gw/db";
import { ManualClock, randomBase62 } from "@gw/shared";
import { filtersSent } from "@gw/test-support";
import { ChainWriter } from "../src/ledger/chain-writer";
import { createLedger, type Ledger } from "../src/ledger/index";
import { entryId, LedgerRepository, type LedgerDoc } from "../src/ledger/repository";
import type { LedgerEntryKind } from "../src/ledger/types";

let mongo: EmbeddedMongo;
let dir: string;
const dbs: Database[] = [];
const ledgers: Ledger[] = [];

async function freshDb(): Promise<Database> {
  const db = await connectDatabase(mongo.uri.replace(/\/[^/]*$/, `/lookups_${randomBase62(8)}`));
  dbs.push(db);
  return db;
}

async function freshLedger(db: Database): Promise<{ db: Database; ledger: Ledger }> {
  const ledger = await createLedger(db, new ManualClock(), { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0 });
  ledgers.push(ledger);
  return { db, ledger };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "gw-lookups-"));
  mongo = await startFerretdb({ dir });
});

afterAll(async () => {
  for (const ledger of ledgers) await ledger.close();
  for (const db of dbs) await db.close();
  await mongo.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Every filter sent while `run` runs is `_id` equality on a string. */
async function expectReadsById(run: () => Promise<unknown>): Promise<void> {
  const filters = (await filtersSent(run)).map((s) => s.filter);
  expect(filters.length).toBeGreaterThan(0);
  for (const filter of filters) expect(Object.keys(filter as object)).toEqual(["_id"]);
  for (const filter of filters) expect(typeof (filter as { _id: unknown })._id).toBe("string");
}

describe("creditEntriesByKeys", () => {
  it("finds the user's credit entries under the keys asked, the oldest of many included, by `_id` only", async () => {
    const db = await freshDb();
    const repo = new LedgerRepository(db);
    await repo.ensureIndexes();
    const writer = new ChainWriter(repo, new ManualClock());
    // 600 credit entries, each followed by a charge, so the walk spans many pages and the credit links skip entries
    await Promise.all(Array.from({ length: 600 }, (_, i) => [
      writer.append("u", { kind: i % 3 ? "purchase" : "bonus", amount: 10, idempotencyKey: `k${i}`, requireCover: false }),
      writer.append("u", { kind: "settle", amount: 0, idempotencyKey: `s${i}`, requireCover: false }),
    ]).flat());
    await writer.append("other", { kind: "purchase", amount: 10, idempotencyKey: "theirs", requireCover: false });
    const { ledger } = await freshLedger(db);
    const keysOf = (entries: Array<{ idempotencyKey: string }>) => entries.map((e) => e.idempotencyKey).sort();
    await expectReadsById(async () => {
      expect(keysOf(await ledger.creditEntriesByKeys("u", ["k0", "k599", "k300", "missing"]))).toEqual(["k0", "k300", "k599"]);
      // another user's entry is not in this chain
      expect(await ledger.creditEntriesByKeys("u", ["theirs"])).toEqual([]);
      expect(await ledger.creditEntriesByKeys("nobody", ["k0"])).toEqual([]);
    });
    const [found] = await ledger.creditEntriesByKeys("u", ["k7"]);
    expect(found).toMatchObject({ userId: "u", kind: "purchase", amount: 10, idempotencyKey: "k7" });
    // the entries after a position only: an older key is not looked for below it
    const seqOf150 = (await ledger.creditEntriesByKeys("u", ["k150"]))[0]?.seq ?? 0;
    expect(seqOf150).toBeGreaterThan(0);
    expect(keysOf(await ledger.creditEntriesByKeys("u", ["k0", "k151", "k150"], { afterSeq: seqOf150 }))).toEqual(["k151"]);
    expect(await ledger.creditEntriesByKeys("u", [])).toEqual([]);
  });
});

describe("legacyLastCredit", () => {
  /** A chain written before the credit links: entries without `lastCredit` or `prevCredit`. */
  async function legacyChain(repo: LedgerRepository, userId: string, kinds: LedgerEntryKind[]): Promise<void> {
    let balance = 0;
    const docs: LedgerDoc[] = kinds.map((kind, i) => {
      const amount = kind === "purchase" ? 1000 : 0;
      balance += amount;
      return { _id: entryId(userId, i + 1), userId, seq: i + 1, kind, amount, balanceAfter: balance, idempotencyKey: `${userId}:${i + 1}`, createdAt: new Date(0) };
    });
    await repo.collection.insertMany(docs);
  }

  it("walks back by `_id` to the newest credit entry; the first new entry links to it", async () => {
    const repo = new LedgerRepository(await freshDb());
    await repo.ensureIndexes();
    // the newest credit is at 3, followed by 70 charges (more than one batch of the walk)
    await legacyChain(repo, "old", ["purchase", "settle", "purchase", ...Array.from({ length: 70 }, (): LedgerEntryKind => "settle")]);
    await legacyChain(repo, "spender", ["hold", "settle", "release"]);
    await expectReadsById(async () => {
      expect(await repo.legacyLastCredit("old", 73)).toBe(3);
      expect(await repo.legacyLastCredit("old", 2)).toBe(1);
      expect(await repo.legacyLastCredit("spender", 3)).toBe(0);
    });
    const writer = new ChainWriter(repo, new ManualClock());
    await expectReadsById(() => writer.append("old", { kind: "settle", amount: 0, idempotencyKey: "new:1", requireCover: false }));
    expect(await repo.reader.at("old", 74)).toMatchObject({ lastCredit: 3 });
    // an entry that carries the link answers for the entries below it
    await legacyChain(repo, "mixed", ["purchase", "settle"]);
    await repo.collection.insertOne({ _id: entryId("mixed", 3), userId: "mixed", seq: 3, kind: "settle", amount: 0, balanceAfter: 1000, idempotencyKey: "mixed:3", createdAt: new Date(0), lastCredit: 1 });
    await repo.collection.insertOne({ _id: entryId("mixed", 4), userId: "mixed", seq: 4, kind: "settle", amount: 0, balanceAfter: 1000, idempotencyKey: "mixed:4", createdAt: new Date(0) });
    expect(await repo.legacyLastCredit("mixed", 4)).toBe(1);
  });
});
