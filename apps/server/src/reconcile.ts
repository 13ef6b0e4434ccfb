// `npm run reconcile`: repairs what a crash can leave behind (credit reservations of a stopped instance; holes an older
// version's batched writes left in a chain, see packages/billing/src/ledger/gap-repair.ts) and proves the ledger invariant:
// every user's chain is gap-free, each balanceAfter is the running sum of the entries, and no balance is negative.
// Each chain is read from its last verified checkpoint on (packages/billing/src/ledger/chain-audit.ts); `--full` reads
// every chain from its beginning and checks every checkpoint again. `--user <id>`: one user's chain.
// Exit code 0 when the ledger verifies, 1 when it does not, 2 when it could not run.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createLedger } from "@gw/billing";
import { loadConfig, loadEnvFile } from "@gw/config";
import { connectDatabase, startFerretdb, type EmbeddedMongo } from "@gw/db";
import { systemClock } from "@gw/shared";

async function reconcile(): Promise<number> {
  const { values } = parseArgs({ options: { user: { type: "string" }, full: { type: "boolean", default: false } } });
  // the same settings as `npm start`: the project root's .env under the process environment
  loadEnvFile(fileURLToPath(new URL("../../../", import.meta.url)));
  const config = loadConfig();
  let embedded: EmbeddedMongo | undefined;
  let uri = config.mongodbUri;
  if (!uri) {
    // same database as `npm start` without MONGODB_URI: the embedded FerretDB under DATA_DIR
    embedded = await startFerretdb({ dir: path.join(config.dataDir, "ferretdb"), binary: config.ferretdbBin });
    uri = embedded.uri;
  }
  // an operator's one-off scan of every chain: it may take its time on a large embedded database
  const db = await connectDatabase(uri, { socketTimeoutMS: 0 });
  const ledger = await createLedger(db, systemClock, { holdTtlSeconds: config.holdTtlSeconds, flushIntervalMs: 0, heartbeatIntervalMs: 0 });
  try {
    const releasedHolds = await ledger.releaseExpiredHolds();
    const repairedGaps = await ledger.repairGaps(values.user, { full: values.full });
    const result = await ledger.verify(values.user, { full: values.full });
    console.log(JSON.stringify({ ok: result.ok, users: result.users, released_reservations: releasedHolds, repaired_gaps: repairedGaps, problems: result.problems }, null, 2));
    return result.ok ? 0 : 1;
  } finally {
    await ledger.close();
    await db.close();
    await embedded?.stop();
  }
}

// Ctrl-C (or SIGTERM, SIGHUP) mid-run exits through process.exit, whose 'exit' hook stops the embedded FerretDB: Node's
// default handling ended this process alone and left FerretDB running in its own process group.
for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) process.on(signal, () => process.exit(code));

reconcile().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`reconcile failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);
