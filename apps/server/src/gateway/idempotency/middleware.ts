import { createHash } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import { AppError } from "@gw/shared";
import type { Logger } from "pino";
import { principalOf } from "../http/auth";
import type { IdempotencyStore } from "./idempotency-store";

const VALID_KEY = /^[\x21-\x7e]{1,255}$/;
/** Headers replayed with a stored answer. */
const KEPT_HEADERS = ["x-request-cost", "deprecation"];

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

/** Whether a request asks for a stream (`stream: true`; a multipart form's field is the text "true"). */
export function asksForStream(req: Request): boolean {
  const stream = typeof req.body === "object" && req.body !== null ? (req.body as { stream?: unknown }).stream : undefined;
  return stream === true || stream === "true";
}

/** Which requests a route answers with a stream; those are not covered. */
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
 * `Idempotency-Key` on POSTs: the first successful JSON answer is stored per (user, key) and replayed for repeats
 * without running (or charging) the request again; a duplicate while the first is in flight gets 409.
 * Streamed requests are not covered (their answer is not one storable body); `streamed` says which those are, so a
 * `stream` flag a route ignores (an image or speech task's) does not make a request skip the check and be charged twice.
 */
export function idempotency(store: IdempotencyStore, logger: Logger, streamed: StreamedRequest = () => false): RequestHandler {
  return async (req, res, next) => {
    const key = req.get("idempotency-key");
    if (key === undefined || streamed(req)) return next();
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
      for (const [name, value] of Object.entries(begun.answer.headers)) res.setHeader(name, value);
      res.setHeader("Idempotent-Replayed", "true");
      res.status(begun.answer.status).json(begun.answer.body);
      return;
    }
    let settled = false;
    const abandon = async (): Promise<void> => {
      if (settled) return;
      settled = true;
      await store.abandon(id).catch((err: unknown) => logger.warn({ err: (err as Error).message }, "idempotency abandon failed"));
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
      settled = true;
      store.complete(id, { status: res.statusCode, body, headers: keptHeaders(res) })
        .catch((err: unknown) => logger.warn({ err: (err as Error).message }, "idempotency store failed"))
        .finally(() => send(body));
      return res;
    };
    res.once("close", () => void abandon());
    next();
  };
}
