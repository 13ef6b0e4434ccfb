// Account reads at scale: `node bench/account-reads.mjs`. It builds the FerretDB binary first when it is missing or was
// built without the project's patch, as `npm start` does: an unpatched one reads the table up to the document for an
// `_id` lookup, the whole ledger for a position that does not exist, which every head search probes. Seeds
// BENCH_ENTRIES ledger entries (default 100000) over BENCH_ACCOUNTS accounts (10000), the large account holding
// BENCH_LARGE_ENTRIES (10000) spread over BENCH_SPAN_DAYS days (90), then prints p50/p99 (ms) of credits, history,
// usage and keys for a 3-entry account and the large one (BENCH_SAMPLES requests each, 200).
// BENCH_DATA_DIR keeps the seeded database between runs (seeded once). See docs/performance.md.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
execFileSync(process.execPath, [path.join(here, "..", "scripts", "install-tools.mjs"), "ferretdb"], { stdio: "inherit" });
// Under node_modules: registry packages resolve from there, and linters skip it.
const outDir = path.join(here, "..", "node_modules", ".cache", "gw-bench-reads");
mkdirSync(outDir, { recursive: true });
await build({
  entryPoints: [path.join(here, "account-reads-app.ts")], outdir: outDir, outExtension: { ".js": ".mjs" },
  bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "error",
  // workspace packages are TypeScript sources: bundle them in, keep registry packages external (as tsup does)
  plugins: [{ name: "externals", setup(b) { b.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith("@gw/") ? undefined : { path: a.path, external: true })); } }],
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
const child = spawn(process.execPath, [path.join(outDir, "account-reads-app.mjs")], { stdio: "inherit" });
child.once("exit", (code) => process.exit(code ?? 1));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
