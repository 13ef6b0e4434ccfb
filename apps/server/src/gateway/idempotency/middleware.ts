import { createHash } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import { databaseOutage } from "@gw/db";
import { AppError } from "@gw/shared";
import type { Logger } from "pino";
import { principalOf } from "../http/auth";
import { CLOSING_EVENTS, DONE_EVENT, setEventStreamHeaders } from "../handlers/stream";
import type { IdempotencyStore, StoredAnswer } from "@gw/gateway";

const VALID_KEY = /^[\x21-\x7e]{1,255}$/;
/** Headers replayed with a stored answer. */
const KEPT_HEADERS = ["x-request-cost", "deprecation", "x-gateway-model"];

/** JSON with object keys sorted: the same request body whatever the key order or spacing. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function fingerprint(req: Request, res: Response): string {
  // the route, not its spelling: /V1/Embeddings and /v1/embeddings/ are the same endpoint
  const endpoint = typeof res.locals.endpoint === "string" ? res.locals.endpoint : req.path;
  const hash = createHash("sha256").update(`${req.method} ${endpoint}\n`).update(canonicalJson(req.body ?? null));
  if (req.file) hash.update(req.file.buffer);
  return hash.digest("hex");
}

/**
 * Whether a request asks for a stream (`stream: true`; a multipart form's field is the text "true", read as the task
 * endpoint reads it: around its whitespace, so that a stream it runs is also the stream recorded and replayed).
 */
export function asksForStream(req: Request): boolean {
  const stream = typeof req.body === "object" && req.body !== null ? (req.body as { stream?: unknown }).stream : undefined;
  return stream === true || (typeof stream === "string" && stream.trim() === "true");
}

/** Which requests a route answers with an event stream. */
export type StreamedRequest = (req: Request) => boolean;

function keptHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined) out[name] = String(value);
  }
  return out;
}

/**
 * Sends an answer that is not JSON (audio bytes, a transcript as text) with its type; under an Idempotency-Key it is
 * stored first, as a JSON answer is.
 */
export function sendRaw(res: Response, contentType: string, body: Buffer | string): void {
  const data = typeof body === "string" ? Buffer.from(body) : body;
  const record = res.locals.recordRaw as ((contentType: string, data: Buffer) => void) | undefined;
  if (record) record(contentType, data);
  else res.type(contentType).send(data);
}

function replay(res: Response, answer: StoredAnswer): void {
  res.setHeader("Idempotent-Replayed", "true");
  if (answer.format === "sse") {
    setEventStreamHeaders(res, answer.headers);
    res.end(answer.body);
    return;
  }
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  if (answer.format === "raw") {
    res.status(answer.status).type(answer.body.contentType).send(Buffer.from(answer.body.base64, "base64"));
    return;
  }
  res.status(answer.status).json(answer.body);
}

/**
 * Records the events a streamed answer writes. A stream that ended with `[DONE]` (or the closing events its handler
 * named) is complete and handed to `store`; that closing event is held back until the answer is stored, so a client that retries as soon as its stream ended
 * gets the replay. Any other end (an error event after output began, a client gone) goes to `abandon` first. Each
 * event written tells `progress` the stream is still alive.
 */
function recordStream(res: Response, store: (events: string) => Promise<void>, abandon: () => Promise<void>, progress: () => void): void {
  const events: string[] = [];
  let complete = false;
  let closing = DONE_EVENT;
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    // `[DONE]`, or the closing events a stream handler named (streams without `[DONE]`: Messages, Responses)
    if (chunk === DONE_EVENT || (typeof chunk === "string" && chunk === res.locals[CLOSING_EVENTS])) {
      closing = chunk;
      complete = true;
      return true;
    }
    if (typeof chunk === "string") events.push(chunk);
    progress();
    return write(chunk, ...rest);
  }) as Response["write"];
  res.end = ((...args: unknown[]) => {
    if (complete && res.statusCode === 200 && !res.destroyed) {
      events.push(closing);
      void store(events.join("")).finally(() => {
        write(closing);
        end(...args);
      });
    } else {
      void abandon().finally(() => end(...args));
    }
    return res;
  }) as Response["end"];
}

/**
 * `Idempotency-Key` on POSTs: the first successful answer is stored per (user, key) and replayed for repeats without
 * running (or charging) the request again; a duplicate while the first is in flight gets 409. `streamed` says which
 * requests a route answers with an event stream: a stream that completed is stored as its events and replayed as
 * one; a `stream` flag a route ignores (an image or speech task's) leaves a request a JSON one.
 */
export function idempotency(store: IdempotencyStore, logger: Logger, streamed: StreamedRequest = () => false): RequestHandler {
  return async (req, res, next) => {
    const key = req.get("idempotency-key");
    if (key === undefined) return next();
    if (!VALID_KEY.test(key)) throw new AppError("invalid_parameter", "Invalid parameter 'Idempotency-Key': 1-255 visible ASCII characters.");
    const id = `${principalOf(res).userId}:${key}`;
    const begun = await store.begin(id, fingerprint(req, res));
    // A duplicate in progress is worth retrying shortly (it then replays); a key reused for another request never is
    // (x-should-retry: false stops the OpenAI SDKs, which retry 409 by default).
    if (begun.kind === "in_flight") throw new AppError("conflict", "A request with this Idempotency-Key is still in progress.", { retryAfterSeconds: 1 });
    if (begun.kind === "mismatch") {
      throw new AppError("conflict", "This Idempotency-Key was already used with a different request.", { headers: { "x-should-retry": "false" } });
    }
    if (begun.kind === "replay") {
      replay(res, begun.answer);
      return;
    }
    let settled = false;
    const abandon = async (): Promise<void> => {
      if (settled) return;
      settled = true;
      await store.abandon(id).catch((err: unknown) => {
        const failed = (e: unknown) => logger.warn({ err: (e as Error).message }, "idempotency abandon failed");
        if (databaseOutage(err)) store.retryWhenReachable(() => store.abandon(id), failed);
        else failed(err);
      });
    };
    const complete = async (answer: StoredAnswer): Promise<void> => {
      settled = true;
      await store.complete(id, answer).catch((err: unknown) => {
        const failed = (e: unknown) => logger.warn({ err: (e as Error).message }, "idempotency store failed");
        // the answer is sent now; it is stored once the database is back, so that a retry then replays it
        if (databaseOutage(err)) store.retryWhenReachable(() => store.complete(id, answer), failed);
        else failed(err);
      });
    };
    const send = res.json.bind(res);
    // The answer is stored before it is sent, so a client retrying right after it arrives gets the replay; a failure
    // frees the key before it is sent, so that retry runs again instead of meeting its own pending record (409).
    res.json = (body: unknown) => {
      if (settled) return send(body);
      if (res.statusCode < 200 || res.statusCode >= 300) {
        void abandon().finally(() => send(body));
        return res;
      }
      void complete({ format: "json", status: res.statusCode, body, headers: keptHeaders(res) }).finally(() => send(body));
      return res;
    };
    res.locals.recordRaw = (contentType: string, data: Buffer) => {
      const sendNow = () => res.type(contentType).send(data);
      if (settled || res.statusCode < 200 || res.statusCode >= 300) {
        void abandon().finally(sendNow);
        return;
      }
      void complete({ format: "raw", status: res.statusCode, body: { contentType, base64: data.toString("base64") }, headers: keptHeaders(res) }).finally(sendNow);
    };
    if (streamed(req)) recordStream(res, (events) => complete({ format: "sse", status: 200, body: events, headers: keptHeaders(res) }), abandon, store.keeper(id));
    res.once("close", () => void abandon());
    next();
  };
}
