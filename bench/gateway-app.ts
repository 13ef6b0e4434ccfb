// The bench gateway's application part, loaded by gateway-server.ts once the heap is tuned.
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig, type PlanDefinition } from "@gw/config";
import { BACKGROUND_NICENESS, connectDatabase, startFerretdb } from "@gw/db";
import { newId } from "@gw/shared";
import { createApp } from "../apps/server/src/app";
import { createMemoryLedger } from "./memory-ledger";

export async function runBenchGateway({ env, plans, ledger: ledgerMode }: { env: Record<string, string>; plans: PlanDefinition[]; ledger: "db" | "memory" }): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gw-bench-"));
  const mongo = await startFerretdb({ dir, niceness: BACKGROUND_NICENESS });
  const config = loadConfig({ ...env, DATA_DIR: dir, MONGODB_URI: mongo.uri }, { plans });
  const db = await connectDatabase(mongo.uri);
  const app = await createApp({ config, db });
  // Handlers read ctx.ledger per request, so replacing it before the first request swaps it everywhere.
  if (ledgerMode === "memory") app.context.ledger = createMemoryLedger();
  const userId = newId("usr");
  const key = await app.context.apiKeys.create(userId, { name: "bench" });
  await app.context.ledger.credit(userId, 1_000_000_000_000, { kind: "adjustment", idempotencyKey: newId("bench") });
  const server = app.createServer();
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
}
