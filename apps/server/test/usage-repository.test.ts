// GET /api/usage's reads (list, totals and the CSV's stream) walk one user's chain by `_id`: the same records and totals as a query over the whole ledger
// (the brute force), for two instances writing at once, any range, model, key, endpoint and status, and no filter but `_id` equality.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createLedger, LEDGER_COLLECTION, type Ledger, type LedgerDoc, nextEntry, USAGE_BLOCKS_COLLECTION, UsageRepository, type StoredUsage, type UsageQuery } from "@gw/billing";
import { connectDatabase, type Database } from "@gw/db";
import { ManualClock, randomBase62 } from "@gw/shared";
import { filtersSent, type SentFilter } from "@gw/test-support";

const DAY_MS = 86_400_000;
const START = Date.parse("2026-03-01T22:00:00Z");
let db: Database;
const clock = new ManualClock(START);
const ledgers: Ledger[] = [];

beforeAll(async () => {
  db = await connectDatabase(inject("mongoUri").replace(/\/[^/]*$/, `/usage_${randomBase62(8)}`));
  for (let i = 0; i < 2; i++) ledgers.push(await createLedger(db, clock, { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0 }));
  await ledgers[0]?.credit("u", 1_000_000_000, { kind: "purchase", idempotencyKey: "buy" });
  await ledgers[0]?.credit("other", 1_000_000_000, { kind: "purchase", idempotencyKey: "buy-other" });
  // 3 days of requests from two instances, some of another user, flushed in between
  for (let round = 0; round < 12; round++) {
    await Promise.all(Array.from({ length: 10 }, async (_, i) => {
      const ledger = ledgers[i % 2] as Ledger;
      const userId = i === 9 ? "other" : "u";
      const holdId = `h${round}-${i}`;
      await ledger.hold(userId, 1_000, { holdId });
      const meta: StoredUsage = {
        requestId: `req-${round}-${i}`, endpoint: i % 4 === 0 ? "/v1/responses" : "/v1/chat/completions", model: i % 3 === 0 ? "model-b" : "model-a", type: "text",
        promptTokens: i + 1, completionTokens: round, processingMs: 5, outputBytes: 10, createdAt: new Date(clock.now() + i),
        // keys k0 and k1, and requests with a session (no key); some streams cut short
        ...(i % 5 === 4 ? {} : { keyId: `k${i % 2}` }),
        ...(i % 7 === 3 ? { status: "partial" as const } : {}),
      };
      await ledger.settle(userId, holdId, 100 + i + round, meta);
    }));
    await Promise.all(ledgers.map((l) => l.flush()));
    clock.advance(DAY_MS / 4);
  }
});

afterAll(async () => {
  for (const ledger of ledgers) await ledger.close();
  await db.close();
});

/** The brute force: every settle of the user with a usage record in the range, by a query, newest first. */
async function bruteForce(q: Omit<UsageQuery, "skip" | "limit">) {
  const docs = await db.connection.collection<{ _id: string; userId: string; kind: string; cost?: number; holdId?: string; meta?: StoredUsage }>(LEDGER_COLLECTION)
    .find({
      userId: q.userId, kind: "settle", "meta.createdAt": { $gte: q.from, $lt: q.to }, ...(q.model ? { "meta.model": q.model } : {}),
      ...(q.keyId ? { "meta.keyId": q.keyId } : {}), ...(q.endpoint ? { "meta.endpoint": q.endpoint } : {}),
      ...(q.status === "partial" ? { "meta.status": "partial" } : q.status === "success" ? { "meta.status": { $ne: "partial" } } : {}),
    })
    .sort({ "meta.createdAt": -1, _id: -1 }).toArray();
  return docs;
}

describe("usage reads by _id", () => {
  const ranges: Array<Omit<UsageQuery, "skip" | "limit">> = [
    { userId: "u", from: new Date(START - DAY_MS), to: new Date(START + 10 * DAY_MS) },
    { userId: "u", from: new Date(START + DAY_MS / 2 + 3), to: new Date(START + 2 * DAY_MS + 1) },
    { userId: "u", from: new Date(START), to: new Date(START + 10 * DAY_MS), model: "model-b" },
    { userId: "u", from: new Date(START), to: new Date(START + 10 * DAY_MS), keyId: "k1" },
    { userId: "u", from: new Date(START), to: new Date(START + 10 * DAY_MS), model: "model-a", keyId: "k0" },
    { userId: "u", from: new Date(START), to: new Date(START + 10 * DAY_MS), endpoint: "/v1/responses" },
    { userId: "u", from: new Date(START - DAY_MS), to: new Date(START + 10 * DAY_MS), status: "partial" },
    { userId: "u", from: new Date(START), to: new Date(START + 2 * DAY_MS), status: "success", keyId: "k0" },
    { userId: "other", from: new Date(START), to: new Date(START + 10 * DAY_MS) },
    { userId: "nobody", from: new Date(START), to: new Date(START + 10 * DAY_MS) },
  ];

  // the default block size, and small ones so that these chains have full blocks read by their summaries
  it.each([64, 3])("lists the same records, in the same order, with the same total and totals as a query (smallest blocks of %i positions, five levels)", async (blockSize) => {
    const repo = new UsageRepository(db, blockSize);
    // twice: the first pass writes the blocks' summaries, the second reads them
    for (const range of [...ranges, ...ranges.slice(0, 2)]) {
      const truth = await bruteForce(range);
      const { records, total } = await repo.list({ ...range, skip: 0, limit: 1000 });
      expect(total).toBe(truth.length);
      expect(records.map((r) => r.requestId)).toEqual(truth.map((d) => d.meta?.requestId));
      for (const [skip, limit] of [[0, 1], [7, 5], [40, 50]] as const) {
        const page = await repo.list({ ...range, skip, limit });
        expect(page.total).toBe(truth.length);
        expect(page.records.map((r) => r.requestId)).toEqual(truth.slice(skip, skip + limit).map((d) => d.meta?.requestId));
      }
      const rows = await repo.totals(range);
      expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(truth.length);
      expect(rows.reduce((n, r) => n + r.costMicros, 0)).toBe(truth.reduce((n, d) => n + (d.cost ?? 0), 0));
      expect(rows.reduce((n, r) => n + r.promptTokens, 0)).toBe(truth.reduce((n, d) => n + (d.meta?.promptTokens ?? 0), 0));
      for (const row of rows) {
        const inRow = truth.filter((d) => d.meta?.model === row.model && d.meta.keyId === row.keyId && d.meta.createdAt.toISOString().slice(0, 10) === row.day);
        expect(row.requests).toBe(inRow.length);
        expect(row.costMicros).toBe(inRow.reduce((n, d) => n + (d.cost ?? 0), 0));
        expect(row.completionTokens).toBe(inRow.reduce((n, d) => n + (d.meta?.completionTokens ?? 0), 0));
      }
    }
    expect((await bruteForce(ranges[0] as Omit<UsageQuery, "skip" | "limit">)).length).toBe(12 * 9);
  }, 120_000);

  it("streams (the CSV) the same records, in the same order, as a query, whatever the positions read at once", async () => {
    const repo = new UsageRepository(db);
    for (const range of ranges) {
      const truth = (await bruteForce(range)).map((d) => d.meta?.requestId);
      for (const batch of [5, 256]) {
        const streamed: string[] = [];
        for await (const record of repo.stream(range, batch)) streamed.push(record.requestId);
        expect(streamed).toEqual(truth);
      }
    }
  }, 120_000);

  it("a block summary deleted (or never written) is computed again from the entries", async () => {
    const repo = new UsageRepository(db, 6);
    const range = ranges[0] as Omit<UsageQuery, "skip" | "limit">;
    const first = await repo.totals(range);
    const blocks = db.connection.collection(USAGE_BLOCKS_COLLECTION);
    expect(await blocks.countDocuments({ _id: { $regex: "^v2:u:6:" } as never })).toBeGreaterThan(3);
    // blocks of 36 positions made of 6 of those
    expect(await blocks.countDocuments({ _id: { $regex: "^v2:u:36:" } as never })).toBeGreaterThan(0);
    await blocks.deleteMany({ _id: { $in: ["v2:u:6:000000000001", "v2:u:6:000000000004"] } as never });
    expect(await repo.totals(range)).toEqual(first);
    expect((await repo.list({ ...range, skip: 3, limit: 4 })).records.map((r) => r.requestId))
      .toEqual((await bruteForce(range)).slice(3, 7).map((d) => d.meta?.requestId));
  });

  it("keeps the block documents it read or wrote: a second identical read reads none again, a fresh instance computes a deleted one again", async () => {
    const ledger = ledgers[0] as Ledger;
    const start = clock.now();
    await ledger.credit("big", 1_000_000_000, { kind: "purchase", idempotencyKey: "buy-big" });
    // more than 256 positions: blocks of the two smallest levels (16 and 256 positions) are full
    for (let round = 0; round < 6; round++) {
      await Promise.all(Array.from({ length: 50 }, async (_, i) => {
        const holdId = `big-${round}-${i}`;
        await ledger.hold("big", 1_000, { holdId });
        const meta: StoredUsage = {
          requestId: holdId, endpoint: "/v1/chat/completions", model: i % 2 ? "model-a" : "model-b", type: "text", promptTokens: i,
          processingMs: 1, outputBytes: 1, createdAt: new Date(clock.now() + i), keyId: `k${i % 3}`,
        };
        await ledger.settle("big", holdId, 10 + i, meta);
      }));
      await ledger.flush();
      clock.advance(DAY_MS / 4);
    }
    expect(await db.connection.collection(LEDGER_COLLECTION).countDocuments({ userId: "big" })).toBeGreaterThan(256);
    // the range's start cuts the chain, so the walk reads summaries, and the records of the page's blocks and the cut one
    const range = { userId: "big", from: new Date(start + DAY_MS / 2 + 3), to: new Date(clock.now() + DAY_MS) };
    const repo = new UsageRepository(db);
    const read = () => Promise.all([repo.list({ ...range, skip: 0, limit: 50 }), repo.totals(range)]);
    const blockReads = (sent: SentFilter[]) => sent.filter((s) => s.collection === USAGE_BLOCKS_COLLECTION).length;
    const byRow = (rows: Awaited<ReturnType<UsageRepository["totals"]>>) => [...rows].sort((a, b) => `${a.day}${a.model}${a.keyId}`.localeCompare(`${b.day}${b.model}${b.keyId}`));

    const answers: Array<Awaited<ReturnType<typeof read>>> = [];
    const cold = await filtersSent(async () => answers.push(await read()));
    const warm = await filtersSent(async () => answers.push(await read()));
    const [first, second] = answers;
    const truth = await bruteForce(range);
    expect(first?.[0].total).toBe(truth.length);
    expect(first?.[0].records.map((r) => r.requestId)).toEqual(truth.slice(0, 50).map((d) => d.meta?.requestId));
    expect(second).toEqual(first);
    expect(blockReads(cold)).toBeGreaterThan(0);
    expect(blockReads(warm)).toBe(0);
    expect(warm.length).toBeGreaterThan(0); // the head and the entries above the last full block
    for (const { filter } of [...cold, ...warm]) expect(Object.keys(filter as object)).toEqual(["_id"]);

    const blocks = db.connection.collection(USAGE_BLOCKS_COLLECTION);
    expect((await blocks.deleteMany({ _id: { $regex: "^v2:big:16:" } as never })).deletedCount).toBeGreaterThan(0);
    expect(await read()).toEqual(first);
    expect(byRow(await new UsageRepository(db).totals(range))).toEqual(byRow(first?.[1] ?? []));
    expect(await blocks.countDocuments({ _id: { $regex: "^v2:big:16:" } as never })).toBeGreaterThan(0);
  });

  it("reads with `_id` equality filters only", async () => {
    const repo = new UsageRepository(db, 7);
    const filters = (await filtersSent(async () => {
      const range = ranges[0] as Omit<UsageQuery, "skip" | "limit">;
      await Promise.all([repo.list({ ...range, skip: 0, limit: 50 }), repo.totals(range)]);
      for await (const record of repo.stream(range, 5)) expect(record.userId).toBe("u");
    })).map((s) => s.filter);
    expect(filters.length).toBeGreaterThan(0);
    for (const filter of filters) expect(Object.keys(filter as object)).toEqual(["_id"]);
  });

  it("counts the newest entry once when the chain ends at a block's end", async () => {
    // a purchase, then settles with usage records up to position 32: the head closes the second 16-position block
    const state = { seq: 0, balance: 0, lastCredit: 0 };
    const at = new Date(START);
    const chain: LedgerDoc[] = [nextEntry("edge", state, { kind: "purchase", amount: 1_000_000, idempotencyKey: "edge:buy", requireCover: false }, at)];
    for (let i = 1; i < 32; i++) {
      const meta: StoredUsage = { requestId: `edge-${i}`, endpoint: "/v1/chat/completions", model: "model-a", type: "text", processingMs: 1, outputBytes: 1, createdAt: new Date(START + i) };
      chain.push(nextEntry("edge", state, { kind: "settle", amount: 0, cost: 10, idempotencyKey: `edge:${i}`, requireCover: false, holdId: `edge-${i}`, meta }, at));
    }
    await db.connection.collection<LedgerDoc>(LEDGER_COLLECTION).insertMany(chain);
    const range = { userId: "edge", from: new Date(START - DAY_MS), to: new Date(START + DAY_MS) };
    for (const repo of [new UsageRepository(db), new UsageRepository(db, 4)]) {
      // twice: blocks computed, then read back
      for (let pass = 0; pass < 2; pass++) {
        expect((await repo.totals(range)).reduce((n, r) => n + r.requests, 0)).toBe(31);
        const page = await repo.list({ ...range, skip: 0, limit: 100 });
        expect(page.total).toBe(31);
        expect(page.records.map((r) => r.requestId)).toEqual(Array.from({ length: 31 }, (_, i) => `edge-${31 - i}`));
      }
    }
  });
});

describe("requests made at the same millisecond", () => {
  it("a page reads the records of its own blocks only, not of every block whose newest request ties the page's last", async () => {
    const state = { seq: 0, balance: 0, lastCredit: 0 };
    const at = new Date(START);
    const chain: LedgerDoc[] = [nextEntry("ties", state, { kind: "purchase", amount: 1_000_000, idempotencyKey: "ties:buy", requireCover: false }, at)];
    for (let i = 1; i < 200; i++) {
      const meta: StoredUsage = { requestId: `ties-${i}`, endpoint: "/v1/chat/completions", model: "model-a", type: "text", processingMs: 1, outputBytes: 1, createdAt: at };
      chain.push(nextEntry("ties", state, { kind: "settle", amount: 0, cost: 10, idempotencyKey: `ties:${i}`, requireCover: false, holdId: `ties-${i}`, meta }, at));
    }
    await db.connection.collection<LedgerDoc>(LEDGER_COLLECTION).insertMany(chain);
    const range = { userId: "ties", from: new Date(START - DAY_MS), to: new Date(START + DAY_MS) };
    // the first read stores the summaries and the records of every block it needed
    await new UsageRepository(db).list({ ...range, skip: 0, limit: 10 });
    const repo = new UsageRepository(db);
    let page: Awaited<ReturnType<UsageRepository["list"]>> | undefined;
    const sent = await filtersSent(async () => {
      page = await repo.list({ ...range, skip: 0, limit: 10 });
    });
    // newest first: the same time, so the highest positions
    expect(page?.records.map((r) => r.requestId)).toEqual(Array.from({ length: 10 }, (_, i) => `ties-${199 - i}`));
    expect(page?.total).toBe(199);
    // positions 193-200 are above the last full block (192); the page's other two are in the block 177-192
    const recordReads = sent.filter((s) => String((s.filter as { _id: string })._id).startsWith("r2:ties:"));
    // (the driver's findOne is a find: each lookup is seen twice)
    expect([...new Set(recordReads.map((s) => (s.filter as { _id: string })._id))]).toEqual(["r2:ties:16:000000000011"]);
  });
});

describe("summaries written with the entries", () => {
  it("the blocks a write closes are summarized by the instance that wrote it: a fresh reader reads no entry below the last full block", async () => {
    // two instances, each telling its own usage repository what its ledger wrote
    const repos = [new UsageRepository(db), new UsageRepository(db)];
    const writers = await Promise.all(repos.map((repo) => createLedger(db, clock, { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0, onAppended: (docs) => repo.entriesWritten(docs) })));
    const start = clock.now();
    try {
      await writers[0]?.credit("burst", 1_000_000_000, { kind: "purchase", idempotencyKey: "buy-burst" });
      for (let round = 0; round < 20; round++) {
        await Promise.all(Array.from({ length: 30 }, async (_, i) => {
          const ledger = writers[(round + i) % 2] as Ledger;
          const holdId = `burst-${round}-${i}`;
          await ledger.hold("burst", 1_000, { holdId });
          const meta: StoredUsage = {
            requestId: holdId, endpoint: "/v1/chat/completions", model: i % 2 ? "model-a" : "model-b", type: "text", promptTokens: i,
            processingMs: 1, outputBytes: 1, createdAt: new Date(clock.now() + i), ...(i % 4 === 0 ? {} : { keyId: `k${i % 3}` }),
          };
          await ledger.settle("burst", holdId, 10 + i, meta);
        }));
        await Promise.all(writers.map((l) => l.flush()));
        clock.advance(DAY_MS / 8);
      }
    } finally {
      for (const ledger of writers) await ledger.close();
      for (const repo of repos) await repo.close();
    }
    const entries = db.connection.collection<LedgerDoc>(LEDGER_COLLECTION);
    const head = (await entries.find({ userId: "burst" }).sort({ seq: -1 }).limit(1).toArray())[0]?.seq ?? 0;
    expect(head).toBeGreaterThan(512);
    const full = head - (head % 16);
    const blocks = db.connection.collection<{ _id: string }>(USAGE_BLOCKS_COLLECTION);
    const stored = new Set((await blocks.find({ _id: { $regex: "^v2:burst:" } as never }).toArray()).map((b) => b._id));
    const id = (size: number, index: number) => `v2:burst:${size}:${index.toString().padStart(12, "0")}`;
    for (let index = 0; index < full / 16; index++) expect(stored).toContain(id(16, index));
    for (let index = 0; index < Math.floor(head / 256); index++) expect(stored).toContain(id(256, index));

    const range = { userId: "burst", from: new Date(start - DAY_MS), to: new Date(clock.now() + DAY_MS) };
    const repo = new UsageRepository(db);
    let answer: Awaited<ReturnType<UsageRepository["totals"]>> = [];
    const sent = await filtersSent(async () => {
      answer = await repo.totals(range);
    });
    const truth = await bruteForce(range);
    expect(answer.reduce((n, r) => n + r.requests, 0)).toBe(truth.length);
    expect(answer.reduce((n, r) => n + r.costMicros, 0)).toBe(truth.reduce((n, d) => n + (d.cost ?? 0), 0));
    const positionsRead = sent.filter((s) => s.collection === LEDGER_COLLECTION)
      .map((s) => Number(/^burst:(\d+)$/.exec((s.filter as { _id: string })._id)?.[1]));
    expect(positionsRead.filter((seq) => seq <= full)).toEqual([]);
  }, 120_000);

  it("one instance writing a chain alone reads no summary back to merge the larger blocks, whatever its batches", async () => {
    const repo = new UsageRepository(db);
    const ledger = await createLedger(db, clock, { holdTtlSeconds: 60, flushIntervalMs: 0, heartbeatIntervalMs: 0, onAppended: (docs) => repo.entriesWritten(docs) });
    const sent = await filtersSent(async () => {
      try {
        await ledger.credit("alone", 1_000_000_000, { kind: "purchase", idempotencyKey: "buy-alone" });
        // batches of 300: a write closes blocks of the next 256 positions before the merge of the last ones runs
        for (let round = 0; round < 3; round++) {
          await Promise.all(Array.from({ length: 300 }, async (_, i) => {
            const holdId = `alone-${round}-${i}`;
            await ledger.hold("alone", 1_000, { holdId });
            const meta: StoredUsage = { requestId: holdId, endpoint: "/v1/chat/completions", model: "model-a", type: "text", processingMs: 1, outputBytes: 1, createdAt: new Date(clock.now() + i) };
            await ledger.settle("alone", holdId, 10, meta);
          }));
          await ledger.flush();
        }
      } finally {
        await ledger.close();
        await repo.close();
      }
    });
    expect(sent.filter((s) => s.collection === USAGE_BLOCKS_COLLECTION)).toEqual([]);
    const stored = await db.connection.collection<{ _id: string }>(USAGE_BLOCKS_COLLECTION).find({ _id: { $regex: "^v2:alone:256:" } as never }).toArray();
    expect(stored.map((b) => b._id)).toEqual(["v2:alone:256:000000000000", "v2:alone:256:000000000001", "v2:alone:256:000000000002"]);
  }, 120_000);
});
