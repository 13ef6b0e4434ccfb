// Open-loop load at a fixed rate (the wrk2 / vegeta method): request i is due at start + i / rate whatever the
// earlier answers did, and its latency is measured from when it was due, not from when it could be sent, so a
// stalled server is charged for the requests it delayed (no coordinated omission). A closed loop of N
// connections instead lets a slow server lower the offered load, and keeps the N requests in lockstep waves.
import { Pool } from "undici";

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

/**
 * Offers `rate` requests per second for `seconds` (plus one warm-up second that is not counted).
 * Resolves with the achieved rate, p50/p99 latency in ms and the number of non-200 answers or failures.
 */
export async function openLoop(target, path, rate, seconds, body) {
  const pool = new Pool(target.url, { connections: 1024, pipelining: 1, keepAliveTimeout: 30_000 });
  const headers = { "content-type": "application/json", ...target.headers };
  const warmup = rate;
  const total = warmup + Math.round(rate * seconds);
  const intervalMs = 1000 / rate;
  const latencies = new Float64Array(total);
  let errors = 0;
  let sent = 0;
  let finished = 0;
  const start = performance.now() + 20;
  let lastEnd = start;

  await new Promise((resolve) => {
    const send = (i, due) => {
      pool.request({ path, method: "POST", headers, body }).then(
        async (res) => {
          await res.body.text();
          if (res.statusCode !== 200 && i >= warmup) errors++;
        },
        () => { if (i >= warmup) errors++; },
      ).finally(() => {
        const now = performance.now();
        latencies[i] = now - due;
        lastEnd = Math.max(lastEnd, now);
        if (++finished === total) resolve();
      });
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * intervalMs <= now) {
        send(sent, start + sent * intervalMs);
        sent++;
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()));
    };
    setTimeout(tick, 20);
  });
  await pool.close();

  const counted = Array.from(latencies.subarray(warmup)).sort((a, b) => a - b);
  const elapsedS = (lastEnd - (start + warmup * intervalMs)) / 1000;
  return {
    offeredRps: rate,
    achievedRps: Math.round(counted.length / elapsedS),
    p50: Number(percentile(counted, 0.5).toFixed(2)),
    p99: Number(percentile(counted, 0.99).toFixed(2)),
    errors,
    total: counted.length,
  };
}
