// The gateway as the bench runs it: its own FerretDB, the real app (auth, plan limits, hold/settle, usage queue),
// one funded user with a key. Bundled by run.mjs with esbuild; prints {url, key} on stdout.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_PLANS, loadConfig } from "@gw/config";
import { connectDatabase, startFerretdb } from "@gw/db";
import { newId } from "@gw/shared";
import { createApp } from "../apps/server/src/app";

const upstream = process.argv[2] ?? "";
const dir = mkdtempSync(path.join(os.tmpdir(), "gw-bench-"));
const mongo = await startFerretdb({ dir });
// Limits stay on (counted on every request) but high enough that the load never hits them.
const plans = DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 100_000_000, concurrentRequests: 100_000 }));
const config = loadConfig({
  NODE_ENV: "production", LOG_LEVEL: "warn", DATA_DIR: dir, MONGODB_URI: mongo.uri,
  SESSION_SECRET: "bench-secret-bench-secret-bench-secret-01", TEXTA_BASE_URL: upstream, TEXTA_API_KEY: "bench",
  UPSTREAM_MAX_RETRIES: "0",
}, { plans });
const db = await connectDatabase(mongo.uri);
const app = await createApp({ config, db });
const userId = newId("usr");
const key = await app.context.apiKeys.create(userId, { name: "bench" });
await app.context.ledger.credit(userId, 1_000_000_000_000, { kind: "adjustment", idempotencyKey: newId("bench") });
const server = createServer(app.express);
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, key: key.key })}\n`);
});
const stop = async () => {
  server.close();
  await app.shutdown();
  await db.close();
  await mongo.stop();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
