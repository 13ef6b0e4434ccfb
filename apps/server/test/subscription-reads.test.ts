// Subscription snapshots read by `_id` only, through the per-user and per-subscription chains: the same snapshots as
// a brute-force query, with two instances writing at once and events delivered twice, and snapshots of a database
// written before the chains.
import { afterAll, describe, expect, inject, it } from "vitest";
import { subscriptionSnapshotStore, type SubscriptionSnapshot } from "@gw/billing";
import { connectDatabase, type Database } from "@gw/db";
import { randomBase62 } from "@gw/shared";
import { filtersSent } from "@gw/test-support";

const opened: Database[] = [];
afterAll(async () => {
  for (const db of opened) await db.close();
});

async function database(name: string): Promise<Database> {
  const db = await connectDatabase(inject("mongoUri").replace(/\/[^/]*$/, `/${name}`));
  opened.push(db);
  return db;
}

const snapshot = (i: number): SubscriptionSnapshot => ({
  id: `evt_${i}`, subscriptionId: `sub_${i % 3}`, userId: i % 3 === 2 ? "u2" : "u1", planId: "pro", status: i % 2 ? "active" : "past_due", at: 1_000 + i,
});

const ids = (list: SubscriptionSnapshot[]) => list.map((s) => s.id).sort();

describe("subscription snapshots read by _id", () => {
  it("answers as a brute-force query, written by two instances at once with every event delivered twice", async () => {
    const name = `subs_${randomBase62(8)}`;
    const dbs = [await database(name), await database(name)];
    const stores = dbs.map((db) => subscriptionSnapshotStore(db.connection));
    const now = new Date();
    await Promise.all(Array.from({ length: 30 }, (_, i) => [0, 1].map((n) => stores[(i + n) % 2]?.insert(snapshot(i), now))).flat());
    const all = (await dbs[0]?.connection.collection<{ _id: string; userId: string; subscriptionId: string }>("billing_subscription_snapshots").find({}).toArray()) ?? [];
    expect(all).toHaveLength(30);
    for (const store of stores) {
      for (const userId of ["u1", "u2", "u3"]) {
        const got = await store.byUser(userId);
        expect(got).toHaveLength(new Set(got.map((s) => s.id)).size);
        expect(ids(got)).toEqual(all.filter((d) => d.userId === userId).map((d) => d._id).sort());
      }
      for (const sub of ["sub_0", "sub_1", "sub_2"]) {
        expect(ids(await store.bySubscription(sub))).toEqual(all.filter((d) => d.subscriptionId === sub).map((d) => d._id).sort());
      }
    }
    expect((await stores[0]?.byUser("u1"))?.find((s) => s.id === "evt_3")).toEqual(snapshot(3));
  });

  it("reads with `_id` equality filters only", async () => {
    const store = subscriptionSnapshotStore((await database(`subs_${randomBase62(8)}`)).connection);
    for (let i = 0; i < 8; i++) await store.insert(snapshot(i), new Date());
    const filters = (await filtersSent(async () => {
      expect(await store.byUser("u1")).toHaveLength(6);
      expect(await store.bySubscription("sub_1")).toHaveLength(3);
    })).map((s) => s.filter);
    expect(filters.length).toBeGreaterThan(0);
    for (const filter of filters) expect(Object.keys(filter as object)).toEqual(["_id"]);
  });

  it("finds the snapshots of a database written before the chains", async () => {
    const db = await database(`subs_${randomBase62(8)}`);
    const { id, ...rest } = snapshot(4);
    await db.connection.collection("billing_subscription_snapshots").insertOne({ _id: id as never, ...rest, createdAt: new Date() });
    const store = subscriptionSnapshotStore(db.connection);
    await store.insert(snapshot(7), new Date());
    expect(ids(await store.byUser("u1"))).toEqual(["evt_4", "evt_7"]);
    expect(ids(await store.bySubscription("sub_1"))).toEqual(["evt_4", "evt_7"]);
  });
});
