// The common part of every fake upstream: a real node:http server that records what it received and
// can be told, per test, to misbehave for the next requests (status codes, hangs, resets, garbage, …).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** the parsed body when it was JSON */
  json?: unknown;
  /** the parsed body when it was multipart/form-data */
  form?: FormData;
}

export type Fault =
  /** answer with this status (and the protocol's error body unless one is given) */
  | { kind: "status"; status: number; body?: unknown; headers?: Record<string, string> }
  /** never answer */
  | { kind: "hang" }
  /** destroy the connection without an answer */
  | { kind: "reset" }
  /**
   * streams: close the connection mid-stream (`at: "end"`: after every event but the last, the end marker;
   * `at: "start"`: after the first event, which carries no text: role chunk, message_start);
   * JSON and bytes: send half the body, then close
   */
  | { kind: "truncate"; at?: "start" | "half" | "end" }
  /** 200 with a body that is not JSON */
  | { kind: "garbage" }
  /** 200 with valid JSON of the wrong shape */
  | { kind: "wrong-shape" }
  /** answer normally, after a pause */
  | { kind: "delay"; ms: number }
  /** answer normally once `pass()` resolves (a test's HoldPoint: the request is held while the test acts) */
  | { kind: "hold"; pass: () => Promise<void> }
  /** 200 with a valid JSON object of about this many bytes (an answer too large to keep) */
  | { kind: "huge"; bytes: number };

interface QueuedFault {
  fault: Fault;
  /** only requests whose path starts with this */
  path?: string;
}

export interface HandlerContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  record: RecordedRequest;
  /** the current request should be cut short (Fault "truncate") */
  truncate: boolean;
  /** where a truncated stream is cut */
  truncateAt: "start" | "half" | "end";
}

export type Handler = (ctx: HandlerContext) => Promise<void> | void;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Sends the first half of a body that announced its full length, then cuts the connection. */
export function sendTruncated(res: ServerResponse, contentType: string, body: Buffer): void {
  res.writeHead(200, { "content-type": contentType, "content-length": body.length });
  res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
}

/** Writes `data`; when the client's side is full, waits until it has read it (or left): TCP backpressure. */
export async function writeWhenRead(res: ServerResponse, data: Buffer | string): Promise<void> {
  if (res.write(data)) return;
  await new Promise<void>((resolve) => {
    const done = () => { res.off("drain", done); res.off("close", done); resolve(); };
    res.on("drain", done).on("close", done);
  });
}

/** Sends `{"padding":"aaa…"}` of about `bytes` bytes in pieces, as long as the client keeps reading. */
async function sendHuge(res: ServerResponse, bytes: number): Promise<void> {
  const piece = Buffer.alloc(64 * 1024, "a");
  res.writeHead(200, { "content-type": "application/json" });
  res.write('{"padding":"');
  for (let sent = 0; sent < bytes && !res.destroyed; sent += piece.length) await writeWhenRead(res, piece);
  if (!res.destroyed) res.end('"}');
}

/** Either sends `body` or, when truncating, half of it. */
export function sendBody(ctx: HandlerContext, contentType: string, body: Buffer | string): void {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  if (ctx.truncate) return sendTruncated(ctx.res, contentType, bytes);
  ctx.res.writeHead(200, { "content-type": contentType, "content-length": bytes.length });
  ctx.res.end(bytes);
}

export abstract class FakeServer {
  /** every request received, oldest first */
  readonly requests: RecordedRequest[] = [];
  /** added before every answer (bench: a 20 ms upstream) */
  latencyMs = 0;
  /** false: requests are not kept (long benchmark runs) */
  recording = true;
  /** between two streamed events */
  chunkDelayMs = 0;
  private readonly faults: QueuedFault[] = [];
  private server: Server | undefined;
  private baseUrl = "";

  /** The protocol's error body for a forced status. */
  protected abstract errorBody(status: number, message: string): unknown;
  /** Routes one request; answers 404 when it returns false. */
  protected abstract route(ctx: HandlerContext): Promise<boolean> | boolean;
  /** Restores the protocol's own options (clear() calls it). */
  protected resetOptions(): void {}

  get url(): string {
    if (!this.server) throw new Error("fake upstream not started");
    return this.baseUrl;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => { void this.handle(req, res); });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The next `count` requests (matching `path`, when given) get this fault. */
  failNext(count: number, fault: Fault, options: { path?: string } = {}): this {
    for (let i = 0; i < count; i++) this.faults.push({ fault, path: options.path });
    return this;
  }

  /** Shorthand: the next `count` requests answer `status`. */
  failStatus(count: number, status: number, options: { path?: string; headers?: Record<string, string> } = {}): this {
    return this.failNext(count, { kind: "status", status, headers: options.headers }, options);
  }

  /** Forgets recorded requests, pending faults and changed options. */
  clear(): void {
    this.requests.length = 0;
    this.faults.length = 0;
    this.latencyMs = 0;
    this.chunkDelayMs = 0;
    this.recording = true;
    this.resetOptions();
  }

  lastRequest(): RecordedRequest | undefined {
    return this.requests[this.requests.length - 1];
  }

  /** Waits between streamed events. */
  protected async pause(): Promise<void> {
    if (this.chunkDelayMs > 0) await sleep(this.chunkDelayMs);
  }

  private takeFault(path: string): Fault | undefined {
    const index = this.faults.findIndex((queued) => queued.path === undefined || path.startsWith(queued.path));
    if (index < 0) return undefined;
    const [queued] = this.faults.splice(index, 1);
    return queued?.fault;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? "/", "http://fake.local");
      const record: RecordedRequest = {
        method: req.method ?? "GET",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      };
      const contentType = req.headers["content-type"] ?? "";
      if (contentType.includes("application/json") && body.length > 0) {
        try { record.json = JSON.parse(body.toString("utf8")); } catch { /* recorded raw */ }
      } else if (contentType.includes("multipart/form-data")) {
        record.form = await new Request(url, { method: "POST", headers: { "content-type": contentType }, body }).formData();
      }
      if (this.recording) this.requests.push(record);

      if (this.latencyMs > 0) await sleep(this.latencyMs);
      const fault = this.takeFault(url.pathname);
      if (fault?.kind === "hang") return;
      if (fault?.kind === "reset") { req.socket.destroy(); return; }
      if (fault?.kind === "delay") await sleep(fault.ms);
      if (fault?.kind === "hold") await fault.pass();
      if (fault?.kind === "status") {
        return sendJson(res, fault.status, fault.body ?? this.errorBody(fault.status, `forced status ${fault.status}`), fault.headers);
      }
      if (fault?.kind === "garbage") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{\"this is not json");
        return;
      }
      if (fault?.kind === "wrong-shape") return sendJson(res, 200, { unexpected: true, data: "nothing you expect" });
      if (fault?.kind === "huge") return await sendHuge(res, fault.bytes);
      const handled = await this.route({
        req, res, url, record, truncate: fault?.kind === "truncate",
        truncateAt: fault?.kind === "truncate" ? (fault.at ?? "half") : "half",
      });
      if (!handled) sendJson(res, 404, this.errorBody(404, `no route for ${req.method} ${url.pathname}`));
    } catch (err) {
      if (!res.headersSent) sendJson(res, 500, this.errorBody(500, `fake upstream failed: ${(err as Error).message}`));
      else res.destroy();
    }
  }
}

/** Writes SSE events one by one; with `truncate`, stops halfway (or before the last event) and cuts the connection. */
export async function writeSse(ctx: HandlerContext, events: string[], pause: () => Promise<void>): Promise<void> {
  ctx.res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const cutAt = ctx.truncateAt === "end" ? events.length - 1 : ctx.truncateAt === "start" ? 1 : Math.max(1, Math.floor(events.length / 2));
  const stopAt = ctx.truncate ? cutAt : events.length;
  for (let i = 0; i < stopAt; i++) {
    if (ctx.res.destroyed) return;
    ctx.res.write(events[i]);
    if (i < stopAt - 1) await pause();
  }
  if (ctx.truncate) {
    // let the written events reach the client before the cut
    await new Promise((resolve) => setTimeout(resolve, 20));
    ctx.res.socket?.destroy();
    return;
  }
  ctx.res.end();
}
