// The gateway as the bench runs it: its own FerretDB, the real app (auth, plan limits, hold/settle with usage records),
// one funded user with a key. Bundled by run.mjs with esbuild; prints {url, key} on stdout.
// argv: <instant upstream url> <slow upstream url> [db|memory]
//   textA-4 is routed to the instant upstream, textC-8x7b to the slow one (both speak OpenAI chat);
//   `memory` swaps the ledger for bench/memory-ledger.ts, to show the non-ledger overhead alone.
// Like apps/server/src/main.ts, this entry tunes the heap before the application's modules load.
import { DEFAULT_PLANS, loadConfig } from "@gw/config";
import { applyHeapTuning } from "../apps/server/src/heap-tuning";

const [instant = "", slow = "", ledgerMode = "db"] = process.argv.slice(2);
// Limits stay on (counted on every request) but high enough that the load never hits them.
const plans = DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 100_000_000, concurrentRequests: 100_000 }));
const env: Record<string, string> = {
  NODE_ENV: "production", LOG_LEVEL: "warn",
  SESSION_SECRET: "bench-secret-bench-secret-bench-secret-01",
  TEXTA_BASE_URL: instant, TEXTA_API_KEY: "bench", TEXTC_BASE_URL: slow, TEXTC_API_KEY: "bench",
  UPSTREAM_MAX_RETRIES: "0",
  // extra settings for experiments, e.g. BENCH_GATEWAY_ENV='{"HEAP_GROWING_PERCENT":"0"}'
  ...(JSON.parse(process.env.BENCH_GATEWAY_ENV ?? "{}") as Record<string, string>),
};
applyHeapTuning(loadConfig(env, { plans }));
const { runBenchGateway } = await import("./gateway-app");
await runBenchGateway({ env, plans, ledger: ledgerMode === "memory" ? "memory" : "db" });
