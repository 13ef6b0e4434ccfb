// The sweep of a stopped instance's reservations reads the chains of the users it recorded (reserved-users.ts) by `_id`,
// never a query on the ledger collection (which the embedded FerretDB answers by reading every entry of every user).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Collection } from "mongodb";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { connectDatabase, startFerretdb, type Database, type EmbeddedMongo } from "@gw/db";
import { ManualClock, randomBase62 } from "@gw/shared";
import { createLedger, LEDGER_COLLECTION, type Ledger } from "../src/ledger/index";

let mongo: EmbeddedMongo;
let dir: string;
const open: Array<{ db: Database; ledger: Ledger }> = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "gw-reserved-users-"));
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

async function instance(dbName: string, clock: ManualClock): Promise<Ledger> {
  const db = await connectDatabase(mongo.uri.replace(/\/[^/]*$/, `/${dbName}`));
  const ledger = await createLedger(db, clock, { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0 });
  open.push({ db, ledger });
  return ledger;
}

it("a stopped instance's reservations are released for every user it served, read by `_id` only", async () => {
  const name = `rsvusers_${randomBase62(8)}`;
  const clock = new ManualClock(1_000_000);
  const crashed = await instance(name, clock);
  const survivor = await instance(name, clock);
  for (const user of ["a", "b", "c"]) await survivor.credit(user, 100_000, { kind: "purchase", idempotencyKey: `buy:${user}` });
  for (const user of ["a", "b"]) {
    await crashed.hold(user, 1_000, { holdId: `${user}:served` });
    await crashed.settle(user, `${user}:served`, 300);
  }
  await crashed.flush();
  await crashed.hold("a", 1_000, { holdId: "a:in-flight" });
  await crashed.hold("b", 1_000, { holdId: "b:in-flight" });
  clock.advance(61_000);
  const ledgerFilters: unknown[] = [];
  const original = Collection.prototype.find as (...args: unknown[]) => unknown;
  const spy = vi.spyOn(Collection.prototype, "find").mockImplementation(function (this: Collection, ...args: unknown[]) {
    if (this.collectionName === LEDGER_COLLECTION) ledgerFilters.push(args[0]);
    return original.apply(this, args);
  } as never);
  try {
    expect(await survivor.releaseExpiredHolds()).toBe(2);
  } finally {
    spy.mockRestore();
  }
  expect(ledgerFilters.length).toBeGreaterThan(0);
  for (const filter of ledgerFilters) expect(Object.keys(filter as object)).toEqual(["_id"]);
  expect(await survivor.balance("a")).toBe(100_000 - 300);
  expect(await survivor.balance("b")).toBe(100_000 - 300);
  expect(await survivor.balance("c")).toBe(100_000);
  expect(await survivor.releaseExpiredHolds()).toBe(0);
  expect((await survivor.verify()).ok).toBe(true);
}, 120_000);
