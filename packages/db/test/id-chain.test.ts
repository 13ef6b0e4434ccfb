// IdChain: per-owner lists of ids read and written by `_id` only, exact with concurrent writers on two connections
// (two instances), and the one-time backfill of documents written before the chains, holes and races included.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFerretdb, type EmbeddedMongo } from "../src/ferretdb";
import { IdChain, type ChainedRef } from "../src/id-chain";

let dir: string;
let mongo: EmbeddedMongo;
const connections: mongoose.Connection[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "gw-id-chain-"));
  mongo = await startFerretdb({ dir });
  for (let i = 0; i < 2; i++) connections.push(await mongoose.createConnection(`${mongo.uri.replace(/\/[^/]*$/, "")}/idchain`).asPromise());
});

afterAll(async () => {
  for (const connection of connections) await connection.close();
  await mongo.stop();
  rmSync(dir, { recursive: true, force: true });
});

const a = () => connections[0] as mongoose.Connection;
const b = () => connections[1] as mongoose.Connection;
const none = async function* (): AsyncIterable<ChainedRef> {};

/** The brute-force view: every position of the owner, by a query on the whole collection. */
async function bruteForce(collection: string, owner: string): Promise<string[]> {
  const docs = await a().collection<{ _id: string; ref: string }>(collection).find({}).toArray();
  return docs.filter((d) => d._id.startsWith(`${owner}:`)).map((d) => d.ref);
}

/** Every filter the driver is given while `run` runs. */
async function filtersOf(run: () => Promise<unknown>): Promise<unknown[]> {
  const filters: unknown[] = [];
  const spies = (["findOne", "find", "countDocuments", "aggregate", "distinct", "updateOne", "updateMany"] as const).map((name) => {
    const original = mongoose.mongo.Collection.prototype[name] as (...args: unknown[]) => unknown;
    return vi.spyOn(mongoose.mongo.Collection.prototype, name).mockImplementation(function (this: mongoose.mongo.Collection, ...args: unknown[]) {
      filters.push(args[0]);
      return original.apply(this, args);
    } as never);
  });
  try {
    await run();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return filters;
}

describe("IdChain", () => {
  it("lists each ref appended by two instances at once exactly once, as a brute-force read finds them", async () => {
    const one = new IdChain(a(), "chains_race", none);
    const two = new IdChain(b(), "chains_race", none);
    const refs = Array.from({ length: 80 }, (_, i) => `r${i}`);
    await Promise.all(refs.map((ref, i) => (i % 2 ? one : two).append(i % 3 ? "u" : "v", ref)));
    const truthU = await bruteForce("chains_race", "u");
    expect([...truthU].sort()).toEqual(refs.filter((_, i) => i % 3).sort());
    expect([...(await one.list("u"))].sort()).toEqual([...truthU].sort());
    expect([...(await two.list("v"))].sort()).toEqual(refs.filter((_, i) => i % 3 === 0).sort());
    expect(await one.list("nobody")).toEqual([]);
    await one.add("u", "r1");
    expect((await one.list("u")).length).toBe(truthU.length);
  });

  it("reads and writes with `_id` equality filters only", async () => {
    const chain = new IdChain(a(), "chains_ids", none);
    await chain.ready();
    const filters = await filtersOf(async () => {
      for (let i = 0; i < 40; i++) await chain.append("u", `r${i}`);
      await chain.add("u", "r3");
      await chain.list("u");
      await chain.first("u");
    });
    expect(filters.length).toBeGreaterThan(0);
    for (const filter of filters) expect(Object.keys(filter as object)).toEqual(["_id"]);
    for (const filter of filters) expect(typeof (filter as { _id: unknown })._id).toBe("string");
  });

  it("chains legacy documents once per database, keeps what is chained, and fills a hole a cut backfill left", async () => {
    const legacy = a().collection<{ _id: string; owner: string }>("legacy_docs");
    await legacy.insertMany(Array.from({ length: 30 }, (_, i) => ({ _id: `d${i}`, owner: `o${i % 4}` })));
    const scan = () => (async function* (): AsyncIterable<ChainedRef> {
      for await (const doc of legacy.find({})) yield { owner: doc.owner, ref: doc._id };
    })();
    const chains = a().collection<{ _id: string; ref: string }>("chains_legacy");
    // o0: d0 chained already; o1: a hole at 2 (a backfill cut short), d1 sits past it
    await chains.insertMany([{ _id: "o0:1", ref: "d0" }, { _id: "o1:1", ref: "d5" }, { _id: "o1:3", ref: "d1" }]);
    const one = new IdChain(a(), "chains_legacy", scan);
    const two = new IdChain(b(), "chains_legacy", scan);
    // two instances start at once while a third writer appends to o2
    await Promise.all([one.ready(), two.ready(), one.append("o2", "new")]);
    for (let owner = 0; owner < 4; owner++) {
      const expected = Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 4 === owner).map((i) => `d${i}`);
      if (owner === 2) expected.push("new");
      expect([...(await one.list(`o${owner}`))].sort()).toEqual(expected.sort());
    }
    // done once: documents written later are not the backfill's
    await legacy.insertOne({ _id: "late", owner: "o3" });
    const three = new IdChain(a(), "chains_legacy", scan);
    expect(await three.list("o3")).not.toContain("late");
  });
});
