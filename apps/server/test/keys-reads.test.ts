// The keys list, a key's usage statistics and the key lookup read by `_id` only (through the per-user, per-key and
// per-hash chains): the same answers as a brute-force query, keys created at once on two instances each listed once,
// the reads a list and a creation cost, and keys of a database written before the chains listed and verified after a
// restart.
import { pino } from "pino";
import { afterAll, describe, expect, inject, it } from "vitest";
import { ApiKeyService, generateApiKey, localRevocationBus } from "@gw/auth";
import { connectDatabase, type Database } from "@gw/db";
import { ManualClock, randomBase62 } from "@gw/shared";
import { filtersSent } from "@gw/test-support";

const clock = new ManualClock(Date.parse("2026-03-01T10:00:00Z"));
const logger = pino({ level: "silent" });
const opened: Array<{ close(): Promise<void> }> = [];

afterAll(async () => {
  for (const item of opened.reverse()) await item.close();
});

async function database(name: string): Promise<Database> {
  const db = await connectDatabase(inject("mongoUri").replace(/\/[^/]*$/, `/${name}`));
  opened.push(db);
  return db;
}

async function instance(db: Database): Promise<ApiKeyService> {
  const service = await ApiKeyService.create({ connection: db.connection, clock, logger, keyEnv: "live", bus: localRevocationBus(), usageFlushMs: 60_000 });
  opened.push(service);
  return service;
}

interface KeyDoc { _id: string; userId: string; createdAt: Date; revokedAt: Date | null }

/** The brute-force view: the user's active keys by a query over the whole collection, with their usage rows summed. */
async function bruteForce(db: Database, userId: string) {
  const keys = await db.connection.collection<KeyDoc>("api_keys").find({ userId, revokedAt: null }).sort({ createdAt: -1, _id: -1 }).toArray();
  const rows = await db.connection.collection<{ keyId: string; count: number }>("api_key_usage").find({}).toArray();
  return keys.map((k) => ({ id: k._id, usageCount: rows.filter((r) => r.keyId === k._id).reduce((sum, r) => sum + r.count, 0) }));
}

describe("keys read by _id", () => {
  it("lists every key created at once on two instances exactly once, with its usage, as a brute-force query does", async () => {
    const db = await database(`keys_${randomBase62(8)}`);
    const instances = [await instance(db), await instance(await database(db.connection.name))];
    const created = await Promise.all(Array.from({ length: 40 }, (_, i) => {
      clock.advance(i % 3); // some share a creation time: the id breaks the tie
      return (instances[i % 2] as ApiKeyService).create(i % 4 ? "u1" : "u2", { name: `k${i}` });
    }));
    for (const [i, key] of created.entries()) {
      for (let n = 0; n <= i % 3; n++) {
        const principal = await (instances[n % 2] as ApiKeyService).verify(key.key);
        expect(principal?.keyId).toBe(key.id);
        (instances[n % 2] as ApiKeyService).recordUse(key.id);
      }
    }
    await Promise.all(instances.map((s) => s.flushUsage()));
    await (instances[0] as ApiKeyService).revoke("u1", created[1]?.id ?? "");
    for (const userId of ["u1", "u2"]) {
      const truth = await bruteForce(db, userId);
      expect(truth.length).toBe(userId === "u1" ? 29 : 10);
      for (const service of instances) {
        expect((await service.listActive(userId)).map((k) => ({ id: k.id, usageCount: k.usageCount }))).toEqual(truth);
      }
    }
    expect(await (instances[1] as ApiKeyService).listActive("nobody")).toEqual([]);
  });

  it("lists, gets, verifies, rotates, suspends and revokes with `_id` equality filters only", async () => {
    const db = await database(`keys_${randomBase62(8)}`);
    const service = await instance(db);
    const keys = [];
    for (let i = 0; i < 6; i++) keys.push(await service.create("u", { name: `k${i}` }));
    const [first, second] = keys;
    if (!first || !second) throw new Error("no keys");
    service.recordUse(first.id);
    await service.flushUsage();
    const sent = await filtersSent(async () => {
      expect(await service.listActive("u")).toHaveLength(6);
      await service.get("u", first.id);
      expect((await service.verify(first.key))?.keyId).toBe(first.id);
      expect(await service.verify(generateApiKey("live").key)).toBeNull();
      await service.updateControls("u", first.id, (await service.get("u", first.id)).controls);
      const rotated = await service.rotate("u", second.id, 0);
      expect((await service.verify(rotated.key))?.keyId).toBe(second.id);
      await service.setUserSuspended("u", true);
      await service.setUserSuspended("u", false);
      await service.revoke("u", first.id);
      expect(await service.revokeAllKeysForUser("u")).toBe(5);
    });
    const filters = sent.map((s) => s.filter);
    expect(filters.length).toBeGreaterThan(20);
    for (const filter of filters) expect(Object.keys(filter as object)).toEqual(["_id"]);
    for (const filter of filters) expect(typeof (filter as { _id: unknown })._id).toBe("string");
  });

  it("lists a user's N keys from a few `_id` reads: one per key and usage row, the chains' known starts not read again", async () => {
    const db = await database(`keys_${randomBase62(8)}`);
    const writer = await instance(db);
    const keys: Array<{ id: string }> = [];
    for (let i = 0; i < 6; i++) {
      clock.advance(1); // newest first
      keys.push(await writer.create("u", { name: `k${i}` }));
    }
    for (const key of keys) writer.recordUse(key.id);
    await writer.flushUsage();
    const reader = await instance(await database(db.connection.name));
    const readsPerCollection = async (run: () => Promise<unknown>) => {
      const sent = await filtersSent(run);
      for (const { filter } of sent) expect(Object.keys(filter as object)).toEqual(["_id"]);
      const counts: Record<string, number> = {};
      const counted = new Set<unknown>(); // the driver's findOne hands its filter on to find: one read
      for (const { collection, filter } of sent) {
        if (counted.has(filter)) continue;
        counted.add(filter);
        counts[collection] = (counts[collection] ?? 0) + 1;
      }
      return counts;
    };
    const listed = async () => expect((await reader.listActive("u")).map((k) => [k.id, k.usageCount])).toEqual(keys.map((k) => [k.id, 1]).reverse());
    // a process that never read them: each chain in growing batches (4, then 8 positions), each document once
    expect(await readsPerCollection(listed)).toEqual({ api_keys_by_user: 12, api_keys: 6, api_key_usage_by_key: 24, api_key_usage: 6 });
    // again: one position past each chain's known start
    expect(await readsPerCollection(listed)).toEqual({ api_keys_by_user: 1, api_keys: 6, api_key_usage_by_key: 6, api_key_usage: 6 });
    // a key created where the user's chain is known is three inserts and no read; its first verification one read
    const created = await reader.create("u", { name: "k6" });
    expect(await readsPerCollection(async () => expect((await reader.verify(created.key))?.keyId).toBe(created.id))).toEqual({ api_keys: 1 });
    expect(await readsPerCollection(() => reader.create("u", { name: "k7" }))).toEqual({});
  });

  it("lists and verifies the keys of a database written before the chains, after a restart", async () => {
    const db = await database(`keys_${randomBase62(8)}`);
    const old = generateApiKey("live");
    const at = new Date(clock.now());
    await db.connection.collection("api_keys").insertMany([
      { _id: "key_old1" as never, userId: "u", name: "old", description: "", prefix: old.prefix, hash: old.hash, createdAt: at, revokedAt: null, lastUsedAt: null, usageCount: 0, suspended: false },
      { _id: "key_old2" as never, userId: "u", name: "gone", description: "", prefix: "ak-x", hash: "h2", createdAt: at, revokedAt: at, lastUsedAt: null, usageCount: 0, suspended: false },
    ]);
    await db.connection.collection("api_key_usage").insertMany([
      { _id: "key_old1:w1" as never, keyId: "key_old1", count: 3, lastUsedAt: at },
      { _id: "key_old1:w2" as never, keyId: "key_old1", count: 4, lastUsedAt: at },
    ]);
    const [a, b] = await Promise.all([instance(db), instance(await database(db.connection.name))]);
    clock.advance(1_000);
    const added = await a.create("u", { name: "new" });
    for (const service of [a, b]) {
      expect((await service.listActive("u")).map((k) => [k.id, k.usageCount])).toEqual([[added.id, 0], ["key_old1", 7]]);
      expect((await service.verify(old.key))?.keyId).toBe("key_old1");
    }
  });
});
