import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFerretdb, type EmbeddedMongo } from "../src/ferretdb";

// The embedded FerretDB is built with a patch (scripts/install-tools.mjs) that lets SQLite answer `_id` equality from
// each collection's unique `_id_` index: without it every such read, update or delete scanned the whole table.

/** SQLite's plan for FerretDB's query of `filter`, as `explain` reports it. */
async function sqlitePlan(connection: mongoose.Connection, collection: string, filter: Record<string, unknown>): Promise<string> {
  const driverDb = connection.db;
  if (!driverDb) throw new Error("not connected");
  const answer = await driverDb.command({ explain: { find: collection, filter }, verbosity: "queryPlanner" });
  return JSON.stringify((answer.queryPlanner as { Plan?: unknown }).Plan);
}

describe("embedded FerretDB: _id equality", () => {
  let dir: string;
  let db: EmbeddedMongo;
  let connection: mongoose.Connection;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "gw-id-index-"));
    db = await startFerretdb({ dir });
    connection = await mongoose.createConnection(`${db.uri.replace(/\/[^/]*$/, "")}/idindex`).asPromise();
    await connection.collection("docs").insertMany([{ _id: "a:1" as never, v: 1 }, { _id: "a:2" as never, v: 2 }]);
  });
  afterAll(async () => {
    await connection.close();
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is an index search, not a scan of the table", async () => {
    const plan = await sqlitePlan(connection, "docs", { _id: "a:2" });
    expect(plan).toMatch(/SEARCH \S+ USING INDEX \S+__id_ /);
    expect(plan).not.toMatch(/SCAN/);
  });

  it("finds, updates and deletes the right document", async () => {
    const docs = connection.collection<{ _id: string; v: number }>("docs");
    expect(await docs.findOne({ _id: "a:2" })).toEqual({ _id: "a:2", v: 2 });
    expect((await docs.updateOne({ _id: "a:1" }, { $set: { v: 10 } })).modifiedCount).toBe(1);
    expect((await docs.deleteOne({ _id: "a:2" })).deletedCount).toBe(1);
    expect(await docs.find({}).toArray()).toEqual([{ _id: "a:1", v: 10 }]);
  });

  it("other filters still scan (only `_id` reaches SQLite)", async () => {
    expect(await sqlitePlan(connection, "docs", { v: 10 })).toMatch(/SCAN/);
  });
});
