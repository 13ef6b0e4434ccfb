// Gateway benchmark: direct-to-fake vs through the gateway with the full hot path (key auth, plan limits,
// credit hold + settle, usage queue). Writes the figures to stdout and bench/results.json.
// Usage: npm run build-free; `node bench/run.mjs` (needs the FerretDB binary from scripts/install-tools.mjs).
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import { build } from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const UPSTREAM_DELAY_MS = Number(process.env.BENCH_UPSTREAM_DELAY_MS ?? 20);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const CONNECTION_STEPS = (process.env.BENCH_CONNECTIONS ?? "8,16,32,48,64,96,128").split(",").map(Number);

function startChild(args) {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => resolve({ child, info: JSON.parse(line) }));
    child.once("exit", (code) => reject(new Error(`${args[0]} exited with ${code}`)));
  });
}

const peakRssMb = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
};

const chatBody = (stream = false) => JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "hello" }], max_tokens: 16, stream });

async function load(url, headers, connections, duration = DURATION_S) {
  const result = await autocannon({
    url: `${url}/v1/chat/completions`, method: "POST", connections, duration, pipelining: 1,
    headers: { "content-type": "application/json", ...headers }, body: chatBody(),
  });
  const errors = result.non2xx + result.errors + result.timeouts;
  return { connections, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors };
}

async function ttft(url, headers, samples = 50) {
  const times = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: chatBody(true) });
    const reader = res.body.getReader();
    let text = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      if (text.includes('"content":"Echo:"') || text.includes('"content":" hello"')) break;
    }
    times.push(performance.now() - start);
    await reader.cancel().catch(() => undefined);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)], p99: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))] };
}

async function main() {
  // Under node_modules: registry packages resolve from there, and linters skip it.
  const outDir = path.join(here, "..", "node_modules", ".cache", "gw-bench");
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [path.join(here, "gateway-server.ts")], outfile: path.join(outDir, "gateway-server.mjs"),
    bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "error",
    // workspace packages are TypeScript sources: bundle them in, keep registry packages external (as tsup does)
    plugins: [{ name: "externals", setup(b) { b.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith("@gw/") ? undefined : { path: a.path, external: true })); } }],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  const fast = await startChild([path.join(here, "fake-upstream.mjs"), "0"]);
  const slow = await startChild([path.join(here, "fake-upstream.mjs"), String(UPSTREAM_DELAY_MS)]);
  const results = {};
  try {
    // 1. added latency at 1 concurrent request, against an instant upstream
    const gwFast = await startChild([path.join(outDir, "gateway-server.mjs"), fast.info.url]);
    const auth = { authorization: `Bearer ${gwFast.info.key}` };
    await load(gwFast.info.url, auth, 1, 2); // warm-up
    const direct1 = await load(fast.info.url, {}, 1);
    const gw1 = await load(gwFast.info.url, auth, 1);
    results.oneConcurrent = { direct: direct1, gateway: gw1, addedP50: +(gw1.p50 - direct1.p50).toFixed(2), addedP99: +(gw1.p99 - direct1.p99).toFixed(2) };
    // 3. streaming time to first token
    const tDirect = await ttft(fast.info.url, {});
    const tGw = await ttft(gwFast.info.url, auth);
    results.ttft = { directP50: +tDirect.p50.toFixed(2), gatewayP50: +tGw.p50.toFixed(2), addedP50: +(tGw.p50 - tDirect.p50).toFixed(2) };
    gwFast.child.kill("SIGTERM");

    // 2. highest RPS with p99 added <= 10 ms against a 20 ms upstream
    const gwSlow = await startChild([path.join(outDir, "gateway-server.mjs"), slow.info.url]);
    const authSlow = { authorization: `Bearer ${gwSlow.info.key}` };
    await load(gwSlow.info.url, authSlow, 8, 2);
    const steps = [];
    for (const c of CONNECTION_STEPS) {
      const d = await load(slow.info.url, {}, c);
      const g = await load(gwSlow.info.url, authSlow, c);
      const step = { connections: c, directRps: d.rps, gatewayRps: g.rps, directP99: d.p99, gatewayP99: g.p99, addedP99: g.p99 - d.p99, errors: g.errors };
      steps.push(step);
      console.log(JSON.stringify(step));
    }
    const within = steps.filter((s) => s.addedP99 <= 10 && s.errors === 0);
    results.throughput = { upstreamDelayMs: UPSTREAM_DELAY_MS, steps, bestRpsWithin10msP99: within.reduce((m, s) => Math.max(m, s.gatewayRps), 0) };
    results.peakRssMb = Math.max(peakRssMb(gwSlow.child.pid));
    gwSlow.child.kill("SIGTERM");
  } finally {
    fast.child.kill("SIGTERM");
    slow.child.kill("SIGTERM");
  }
  writeFileSync(path.join(here, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results, null, 2));
}

await main();
