// The account-reads benchmark (bench/account-reads.mjs bundles and runs this): seeds a ledger of BENCH_ENTRIES entries
// over BENCH_ACCOUNTS accounts in the ledger's own stored format (ChainWriter's nextEntry, the checkpoints' ChainFold,
// the head hints, the usage summaries written after inserts), then
// measures GET /api/billing/credits, /api/billing/history, /api/usage and /api/keys for a small and a large account
// against the real app on the embedded FerretDB. Prints one JSON line of results. See docs/performance.md.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { nextEntry, type ChainState, type Movement, HEADS_COLLECTION, ChainFold, CHECKPOINTS_COLLECTION, EMPTY_CHAIN, type CheckpointDoc, LEDGER_COLLECTION, type LedgerDoc } from "@gw/billing";
import { loadConfig } from "@gw/config";
import { connectDatabase, startFerretdb } from "@gw/db";
import { createApp } from "../apps/server/src/app";

const env = process.env;
const ENTRIES = Number(env.BENCH_ENTRIES ?? 100_000);
const ACCOUNTS = Number(env.BENCH_ACCOUNTS ?? 10_000);
const LARGE = Math.min(Number(env.BENCH_LARGE_ENTRIES ?? 10_000), Math.floor(ENTRIES / 4));
const SPAN_DAYS = Number(env.BENCH_SPAN_DAYS ?? 90);
const SAMPLES = Number(env.BENCH_SAMPLES ?? 200);
/** a directory kept between runs: seeded once, measured as often as wanted */
const DATA_DIR = env.BENCH_DATA_DIR;
const DAY_MS = 86_400_000;
const INSERT_BATCH = 1_000;
const PARALLEL_INSERTS = 4;

const accountId = (i: number): string => `usr_bench${i.toString().padStart(6, "0")}`;
const SMALL = accountId(0);
const BIG = accountId(1);

/** What the gateway writes for one account: a purchase, then reservations of 8 requests each, a bonus now and then. */
function* movements(userId: string, count: number): Generator<Movement> {
  yield { kind: "purchase", amount: 1_000_000_000_000, idempotencyKey: `${userId}:buy`, requireCover: false };
  for (let n = 1, cycle = 0; n < count; cycle++) {
    const reservationId = `rsv:inst_bench:${cycle}`;
    if (cycle % 50 === 49 && n < count) {
      n++;
      yield { kind: "bonus", amount: 5_000_000, idempotencyKey: `${userId}:bonus:${cycle}`, requireCover: false };
    }
    if (n++ >= count) return;
    yield { kind: "hold", amount: -1_000_000, idempotencyKey: `${reservationId}:${userId}:hold`, requireCover: true, reservationId };
    for (let r = 0; r < 8 && n < count; r++, n++) {
      yield {
        kind: "settle", amount: 0, cost: 1_000 + r, idempotencyKey: `${userId}:${cycle}:${r}`, requireCover: false, reservationId, holdId: `hold_${cycle}_${r}`,
        meta: { requestId: `req_${cycle}_${r}`, keyId: `key_${userId}`, endpoint: "/v1/chat/completions", model: r % 3 ? "gpt-4o" : "gpt-4o-mini", type: "text", promptTokens: 10 + r, completionTokens: 20, processingMs: 12, outputBytes: 400 },
      };
    }
    if (n++ >= count) return;
    yield { kind: "release", amount: 1_000_000 - 8_000, idempotencyKey: `${reservationId}:${userId}:release`, requireCover: false, reservationId };
  }
}

/** One account's chain as the writer stores it, its entries spread over the last SPAN_DAYS days, and its checkpoints. */
function chainOf(userId: string, count: number, now: number): { docs: LedgerDoc[]; checkpoints: CheckpointDoc[] } {
  const state: ChainState = { seq: 0, balance: 0, lastCredit: 0, recentCredits: [] };
  const docs: LedgerDoc[] = [];
  const fold = new ChainFold(userId, EMPTY_CHAIN);
  const checkpoints: CheckpointDoc[] = [];
  const start = now - SPAN_DAYS * DAY_MS;
  const step = (SPAN_DAYS * DAY_MS) / Math.max(count, 1);
  for (const m of movements(userId, count)) {
    const at = new Date(start + docs.length * step);
    if (m.meta) m.meta = { ...m.meta, createdAt: new Date(at.getTime() - 50) };
    const doc = nextEntry(userId, state, m, at);
    docs.push(doc);
    const checkpoint = fold.add(doc);
    if (checkpoint) checkpoints.push(checkpoint);
  }
  return { docs, checkpoints };
}

/** What a seeded database holds for the measurements (kept in BENCH_DATA_DIR's seeded.json). */
interface Seeded {
  /** the API keys of the small and the large account */
  keys: Record<string, string>;
  entries: number;
}

async function seed(app: Awaited<ReturnType<typeof createApp>>, now: number): Promise<Seeded> {
  const connection = app.context.db.connection;
  const ledger = connection.collection<LedgerDoc>(LEDGER_COLLECTION);
  const hints = connection.collection<{ _id: string; seq: number; checkpoint?: number }>(HEADS_COLLECTION);
  const checkpointDocs = connection.collection<CheckpointDoc>(CHECKPOINTS_COLLECTION);
  const perAccount = Math.max(1, Math.floor((ENTRIES - LARGE - 3) / Math.max(ACCOUNTS - 2, 1)));
  const sizes = (i: number): number => (i === 0 ? 3 : i === 1 ? LARGE : perAccount);
  const began = performance.now();
  let buffer: LedgerDoc[] = [];
  const inFlight = new Set<Promise<unknown>>();
  // the usage repository is told of each insert as the ledger tells it, in the order written, so that the seeded
  // chains have their usage summaries as the gateway's own writes leave them
  let told: Promise<unknown> = Promise.resolve();
  const flush = async (docs: LedgerDoc[]) => {
    const insert = ledger.insertMany(docs, { ordered: false }).finally(() => inFlight.delete(insert));
    told = Promise.all([told, insert]).then(() => app.context.usage.entriesWritten(docs));
    inFlight.add(insert);
    if (inFlight.size >= PARALLEL_INSERTS) await Promise.race(inFlight);
  };
  let written = 0;
  const heads: Array<{ _id: string; seq: number; checkpoint?: number }> = [];
  const checkpoints: CheckpointDoc[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const chain = chainOf(accountId(i), sizes(i), now);
    const newest = chain.checkpoints[chain.checkpoints.length - 1];
    heads.push({ _id: accountId(i), seq: chain.docs.length, ...(newest ? { checkpoint: newest.seq } : {}) });
    checkpoints.push(...chain.checkpoints);
    for (const doc of chain.docs) {
      buffer.push(doc);
      if (buffer.length >= INSERT_BATCH) {
        written += buffer.length;
        await flush(buffer);
        buffer = [];
      }
    }
  }
  written += buffer.length;
  if (buffer.length) await flush(buffer);
  await Promise.all(inFlight);
  await told;
  await app.context.usage.close();
  for (let i = 0; i < heads.length; i += INSERT_BATCH) await hints.insertMany(heads.slice(i, i + INSERT_BATCH), { ordered: false });
  for (let i = 0; i < checkpoints.length; i += INSERT_BATCH) await checkpointDocs.insertMany(checkpoints.slice(i, i + INSERT_BATCH), { ordered: false });
  const ledgerSeconds = (performance.now() - began) / 1000;
  // the accounts themselves (the users collection's stored shape), so that a session of theirs authenticates
  const users = connection.collection<{ _id: string }>("users");
  for (let i = 0; i < ACCOUNTS; i += INSERT_BATCH) {
    await users.insertMany(Array.from({ length: Math.min(INSERT_BATCH, ACCOUNTS - i) }, (_, j) => ({
      _id: accountId(i + j), email: `${accountId(i + j)}@bench.example`, name: "", emailVerifiedAt: new Date(now), createdAt: new Date(now),
    })), { ordered: false });
  }
  // one key per account, through the key service (as the dashboard creates them)
  const keys: Record<string, string> = {};
  for (let i = 0; i < ACCOUNTS; i += 16) {
    await Promise.all(Array.from({ length: Math.min(16, ACCOUNTS - i) }, async (_, j) => {
      const created = await app.context.apiKeys.create(accountId(i + j), { name: "bench" });
      if (i + j < 2) keys[accountId(i + j)] = created.key;
    }));
  }
  process.stderr.write(`seeded ${written} entries over ${ACCOUNTS} accounts in ${ledgerSeconds.toFixed(1)} s (${Math.round(written / ledgerSeconds)}/s), keys in ${((performance.now() - began) / 1000 - ledgerSeconds).toFixed(1)} s\n`);
  return { keys, entries: written };
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

/** A route's first request, and p50/p99 over `samples` requests (after 10 to warm up); a request that fails or takes a minute ends it. */
async function measure(url: string, headers: Record<string, string>, samples: number): Promise<{ first: number; p50: number; p99: number; bytes: number } | { error: string }> {
  const times: number[] = [];
  let bytes = 0;
  let first = NaN;
  for (let i = 0; i < samples + 10; i++) {
    const start = performance.now();
    try {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(60_000) });
      const body = await res.text();
      if (res.status !== 200) return { error: `answered ${res.status}: ${body.slice(0, 300)}` };
      bytes = body.length;
    } catch (err) {
      return { error: `request ${i + 1}: ${(err as Error).message}` };
    }
    // the first 10 warm up; the very first is reported apart (this process's caches empty)
    if (i === 0) first = performance.now() - start;
    if (i >= 10) times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { first: Number(first.toFixed(2)), p50: Number(percentile(times, 0.5).toFixed(2)), p99: Number(percentile(times, 0.99).toFixed(2)), bytes };
}

async function main(): Promise<void> {
  const dir = DATA_DIR ?? mkdtempSync(path.join(os.tmpdir(), "gw-bench-reads-"));
  mkdirSync(dir, { recursive: true });
  const seededMark = path.join(dir, "seeded.json");
  const mongo = await startFerretdb({ dir: path.join(dir, "ferretdb") });
  const unlimited = "1000000000/60";
  const config = loadConfig({
    NODE_ENV: "production", LOG_LEVEL: "warn", SESSION_SECRET: "bench-secret-bench-secret-bench-secret-01",
    DATA_DIR: dir, MONGODB_URI: mongo.uri,
    LIMIT_CREDITS: unlimited, LIMIT_BILLING_READ: unlimited, LIMIT_USAGE: unlimited, LIMIT_KEYS_LIST: unlimited, LIMIT_KEYS_CREATE: unlimited,
  });
  // Ctrl-C or SIGTERM mid-run: stop the FerretDB started here (its own process group) before exiting
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void mongo.stop().finally(() => process.exit(130)));
  const db = await connectDatabase(mongo.uri, { socketTimeoutMS: 0 });
  const app = await createApp({ config, db });
  try {
    // the ledger's size from the seeding: counting a collection reads all of it on the embedded database
    const { keys, entries } = existsSync(seededMark) ? (JSON.parse(readFileSync(seededMark, "utf8")) as Seeded) : await seed(app, Date.now());
    writeFileSync(seededMark, JSON.stringify({ keys, entries }));
    const server = app.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const routes = ["/api/billing/credits", "/api/billing/history", "/api/usage", "/api/keys"];
    const results: Record<string, Record<string, unknown>> = { small: {}, large: {} };
    const accounts = [["small", SMALL], ["large", BIG]] as const;
    // the keys list (the dashboard's session) last: a slow one keeps the database busy after its client gave up
    const cookies = new Map<string, string>();
    for (const [, userId] of accounts) cookies.set(userId, (await app.context.auth.sessions.start(userId)).setCookie.split(";")[0] ?? "");
    for (const route of routes) {
      for (const [name, userId] of accounts) {
        const headers: Record<string, string> = route === "/api/keys" ? { cookie: cookies.get(userId) ?? "" } : { authorization: `Bearer ${keys[userId] ?? ""}` };
        const result = await measure(`${base}${route}`, headers, SAMPLES);
        (results[name] as Record<string, unknown>)[route] = result;
        process.stderr.write(`${name} ${route}: ${JSON.stringify(result)}\n`);
      }
    }
    console.log(JSON.stringify({ date: new Date().toISOString(), entries, accounts: ACCOUNTS, largeEntries: LARGE, spanDays: SPAN_DAYS, samples: SAMPLES, cpus: os.cpus().length, cpu: os.cpus()[0]?.model, results }));
    server.close();
    server.closeAllConnections();
  } finally {
    await app.shutdown();
    await db.close();
    await mongo.stop();
    if (!DATA_DIR) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
