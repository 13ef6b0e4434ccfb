// Open-loop load at a fixed rate (the wrk2 / vegeta method): request i is due at start + i / rate whatever the
// earlier answers did, and its latency is measured from when it was due, not from when it could be sent, so a
// stalled server is charged for the requests it delayed (no coordinated omission). A closed loop of N
// connections instead lets a slow server lower the offered load, and keeps the N requests in lockstep waves.
//
// The generator shares the machine with what it measures, so it is kept as cheap as wrk: plain keep-alive TCP
// sockets, one request in flight per socket (as real clients), the request bytes built once, and answers parsed
// only as far as the status code and Content-Length (or the end of a chunked body). A full HTTP client (undici)
// cost about four times the CPU per request here, CPU taken from the gateway under test.
import net from "node:net";

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
const HEADER_END = Buffer.from("\r\n\r\n");
const CHUNKED_END = Buffer.from("0\r\n\r\n");

/** One keep-alive connection that sends the same request and reports each answer's status. */
class Connection {
  constructor(host, port, onAnswer, onFailure) {
    this.socket = net.connect({ host, port, noDelay: true });
    this.onAnswer = onAnswer;
    this.onFailure = onFailure;
    this.reset();
    this.socket.on("data", (chunk) => this.read(chunk));
    this.socket.on("error", () => {});
    this.socket.on("close", () => {
      this.closed = true;
      if (this.busy) this.fail();
    });
  }

  reset() {
    this.busy = false;
    this.buffered = null;
    this.status = 0;
    this.remaining = -1;
    this.chunked = false;
  }

  send(request, token) {
    this.busy = true;
    this.token = token;
    this.socket.write(request);
  }

  fail() {
    const token = this.token;
    this.reset();
    this.onFailure(this, token);
  }

  read(chunk) {
    if (!this.busy) return;
    let data = this.buffered ? Buffer.concat([this.buffered, chunk]) : chunk;
    if (this.status === 0) {
      const end = data.indexOf(HEADER_END);
      if (end < 0) {
        this.buffered = data;
        return;
      }
      const head = data.toString("latin1", 0, end);
      this.status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      this.chunked = !length && /\r\ntransfer-encoding:\s*chunked/i.test(head);
      this.remaining = length ? Number(length[1]) : 0;
      data = data.subarray(end + 4);
    }
    if (this.chunked) {
      // Only the end matters: the last chunk is "0\r\n\r\n" at the very end of what arrived.
      if (data.length >= 5 && data.subarray(data.length - 5).equals(CHUNKED_END)) return this.done();
      this.buffered = data.subarray(Math.max(0, data.length - 4));
      return;
    }
    this.remaining -= data.length;
    this.buffered = null;
    if (this.remaining <= 0) this.done();
  }

  done() {
    const { status, token } = this;
    this.reset();
    this.onAnswer(this, token, status);
  }
}

/**
 * Offers `rate` requests per second for `seconds` (plus one warm-up second that is not counted).
 * Resolves with the achieved rate, p50/p99 latency in ms and the number of non-200 answers or failures.
 */
export async function openLoop(target, path, rate, seconds, body) {
  const url = new URL(target.url);
  const headers = { host: url.host, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...target.headers };
  const request = Buffer.from(`POST ${path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body}`);
  const warmup = rate;
  const total = warmup + Math.round(rate * seconds);
  const intervalMs = 1000 / rate;
  const latencies = new Float64Array(total);
  const idle = [];
  const all = new Set();
  let errors = 0;
  let sent = 0;
  let finished = 0;
  const start = performance.now() + 20;
  let lastEnd = start;
  let resolveRun;
  const finishedAll = new Promise((resolve) => { resolveRun = resolve; });

  const complete = (connection, i, ok) => {
    const now = performance.now();
    latencies[i] = now - (start + i * intervalMs);
    lastEnd = Math.max(lastEnd, now);
    if (!ok && i >= warmup) errors++;
    if (!connection.closed) idle.push(connection);
    else all.delete(connection);
    if (++finished === total) resolveRun();
  };
  const onAnswer = (connection, i, status) => complete(connection, i, status === 200);
  const onFailure = (connection, i) => complete(connection, i, false);
  const connection = () => {
    let c = idle.pop();
    while (c?.closed) c = idle.pop();
    if (c) return c;
    c = new Connection(url.hostname, Number(url.port), onAnswer, onFailure);
    all.add(c);
    return c;
  };

  const tick = () => {
    const now = performance.now();
    while (sent < total && start + sent * intervalMs <= now) {
      connection().send(request, sent);
      sent++;
    }
    if (sent < total) setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()));
  };
  setTimeout(tick, 20);
  await finishedAll;
  for (const c of all) c.socket.destroy();

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
