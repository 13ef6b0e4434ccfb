// The gateway as the bench runs it: its own FerretDB, the real app (auth, plan limits, hold/settle, usage queue),
// one funded user with a key. Bundled by run.mjs with esbuild; prints {url, key} on stdout.
// argv: <instant upstream url> <slow upstream url> [db|memory]
//   textA-4 is routed to the instant upstream, textC-8x7b to the slow one (both speak OpenAI chat);
//   `memory` swaps the ledger for bench/memory-ledger.ts, to show the non-ledger overhead alone.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_PLANS, loadConfig } from "@gw/config";
import { connectDatabase, startFerretdb } from "@gw/db";
import { newId } from "@gw/shared";
import { createApp } from "../apps/server/src/app";
import { createMemoryLedger } from "./memory-ledger";

const [instant = "", slow = "", ledgerMode = "db"] = process.argv.slice(2);
const dir = mkdtempSync(path.join(os.tmpdir(), "gw-bench-"));
const mongo = await startFerretdb({ dir });
// Limits stay on (counted on every request) but high enough that the load never hits them.
const plans = DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 100_000_000, concurrentRequests: 100_000 }));
const config = loadConfig({
  NODE_ENV: "production", LOG_LEVEL: "warn", DATA_DIR: dir, MONGODB_URI: mongo.uri,
  SESSION_SECRET: "bench-secret-bench-secret-bench-secret-01",
  TEXTA_BASE_URL: instant, TEXTA_API_KEY: "bench", TEXTC_BASE_URL: slow, TEXTC_API_KEY: "bench",
  UPSTREAM_MAX_RETRIES: "0",
  // extra settings for experiments, e.g. BENCH_GATEWAY_ENV='{"USAGE_FLUSH_INTERVAL_MS":"200"}'
  ...(JSON.parse(process.env.BENCH_GATEWAY_ENV ?? "{}") as Record<string, string>),
}, { plans });
const db = await connectDatabase(mongo.uri);
const app = await createApp({ config, db });
// Handlers read ctx.ledger per request, so replacing it before the first request swaps it everywhere.
if (ledgerMode === "memory") app.context.ledger = createMemoryLedger();
const userId = newId("usr");
const key = await app.context.apiKeys.create(userId, { name: "bench" });
await app.context.ledger.credit(userId, 1_000_000_000_000, { kind: "adjustment", idempotencyKey: newId("bench") });
const server = createServer(app.listener);
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, key: key.key, ledger: ledgerMode })}\n`);
});
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeAllConnections();
  await app.shutdown();
  await db.close();
  await mongo.stop();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
// The bench driver died without stopping us: do not outlive it.
process.on("disconnect", () => void stop());
