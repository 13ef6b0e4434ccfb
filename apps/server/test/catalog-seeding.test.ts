// The catalog's first start on an empty database, by several instances at once: each opens (none fails on the
// other's head or version 1) and all put the same version 1 in force.
import { pino } from "pino";
import { afterAll, describe, expect, inject, it } from "vitest";
import { Catalog } from "@gw/api";
import { loadConfig } from "@gw/config";
import { connectDatabase, type Database } from "@gw/db";
import { randomBase62 } from "@gw/shared";

const opened: Database[] = [];
afterAll(async () => {
  for (const db of opened) await db.close();
});

describe("the catalog's first start", () => {
  it("seeds version 1 once when twelve instances open it at once", async () => {
    const uri = inject("mongoUri").replace(/\/[^/]*$/, `/catalog_${randomBase62(8)}`);
    const dbs = await Promise.all(Array.from({ length: 12 }, () => connectDatabase(uri)));
    opened.push(...dbs);
    const config = loadConfig({ SESSION_SECRET: "catalog-seeding-secret-catalog-seeding" });
    const logger = pino({ level: "silent" });
    const catalogs = await Promise.all(dbs.map((db) => Catalog.open(db, config, logger)));
    for (const catalog of catalogs) expect(catalog.snapshot().version).toBe(1);
    const docs = await dbs[0]?.connection.collection("catalog").find({}).toArray();
    expect(docs?.map((d) => String(d._id)).sort()).toEqual(["catalog:1", "catalog:head"]);
  });
});
