import type { Request, Response } from "express";
import type { StoredUsage } from "@gw/billing";
import { principalOf } from "../http/auth";
import type { GatewayDeps } from "../deps";
import type { KeyBudget } from "@gw/gateway";
import { Cancellation, type CancelSignal } from "@gw/shared";
import { observationOf, type RequestObservation } from "../../observability/request-observation";

/** Per-request facts used for holds, usage records and responses. */
export interface RequestMeta {
  userId: string;
  keyId?: string;
  /** the key's spend limit, when it has one: every hold of the request passes it to CreditHold.open */
  keyBudget?: KeyBudget;
  requestId: string;
  endpoint: string;
  /** performance.now() at the start: processing time is measured on the monotonic clock, not the domain clock */
  startedAt: number;
  /** aborted when the client goes away before the answer is complete */
  signal: CancelSignal;
  /** the request's metrics, spans and access log facts */
  observation: RequestObservation;
}

export function requestMeta(deps: GatewayDeps, req: Request, res: Response): RequestMeta {
  const principal = principalOf(res);
  const cancellation = new Cancellation();
  // A client that left before the handler ran (during an idempotency lookup, say) has had its `close` already:
  // the call is cancelled at once, so nothing is sent upstream and nothing is charged.
  if (res.destroyed) cancellation.abort();
  else {
    res.once("close", () => {
      if (!res.writableFinished) cancellation.abort();
    });
  }
  const limitMicros = principal.key?.controls.limitMicros;
  return {
    userId: principal.userId,
    keyId: principal.keyId,
    keyBudget: principal.key && limitMicros != null
      ? { spend: deps.ctx.keySpend, limit: { userId: principal.userId, keyId: principal.key.keyId, limitMicros, reset: principal.key.controls.limitReset } }
      : undefined,
    requestId: String(res.locals.requestId),
    // the route's own path (set when the route is mounted), not the spelling this request used
    endpoint: typeof res.locals.endpoint === "string" ? res.locals.endpoint : req.path,
    startedAt: performance.now(),
    signal: cancellation,
    observation: observationOf(res),
  };
}

/** What a handler knows of a request's usage; the rest of the record comes from the request itself. */
export type UsageFields = Pick<StoredUsage, "model" | "deployment" | "type" | "promptTokens" | "completionTokens" | "characters" | "audioSeconds" | "images" | "outputBytes"> & {
  status?: "success" | "partial";
};

/** The request's usage record, stored with its charge (`CreditHold.settle`): one ledger entry per request. */
export function usageRecord(deps: GatewayDeps, meta: RequestMeta, fields: UsageFields): StoredUsage {
  const record: StoredUsage = {
    requestId: meta.requestId,
    endpoint: meta.endpoint,
    model: fields.model,
    type: fields.type,
    processingMs: Math.max(0, Math.round(performance.now() - meta.startedAt)),
    outputBytes: fields.outputBytes,
    createdAt: new Date(deps.ctx.clock.now()),
  };
  // Only what is not the default: a key (not a session), non-zero counters, a partial stream.
  if (meta.keyId !== undefined) record.keyId = meta.keyId;
  if (fields.deployment !== undefined) record.deployment = fields.deployment;
  if (fields.promptTokens) record.promptTokens = fields.promptTokens;
  if (fields.completionTokens) record.completionTokens = fields.completionTokens;
  if (fields.characters) record.characters = fields.characters;
  if (fields.audioSeconds) record.audioSeconds = fields.audioSeconds;
  if (fields.images) record.images = fields.images;
  if (fields.status === "partial") record.status = "partial";
  return record;
}
