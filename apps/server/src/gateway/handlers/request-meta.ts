import type { Request, Response } from "express";
import type { UsageRecord, UsageType } from "../usage/usage-repository";
import { principalOf } from "../http/auth";
import type { GatewayDeps } from "../deps";
import { Cancellation, newId, type CancelSignal } from "@gw/shared";

/** Per-request facts used for holds, usage records and responses. */
export interface RequestMeta {
  userId: string;
  keyId?: string;
  requestId: string;
  endpoint: string;
  /** performance.now() at the start: processing time is measured on the monotonic clock, not the domain clock */
  startedAt: number;
  /** aborted when the client goes away before the answer is complete */
  signal: CancelSignal;
}

export function requestMeta(deps: GatewayDeps, req: Request, res: Response): RequestMeta {
  const principal = principalOf(res);
  const cancellation = new Cancellation();
  res.once("close", () => {
    if (!res.writableFinished) cancellation.abort();
  });
  return {
    userId: principal.userId,
    keyId: principal.keyId,
    requestId: String(res.locals.requestId),
    endpoint: req.path,
    startedAt: performance.now(),
    signal: cancellation,
  };
}

export interface UsageFields {
  model: string;
  type: UsageType;
  costMicros: number;
  promptTokens?: number;
  completionTokens?: number;
  characters?: number;
  audioSeconds?: number;
  images?: number;
  outputBytes: number;
  status?: "success" | "partial";
}

export function recordUsage(deps: GatewayDeps, meta: RequestMeta, fields: UsageFields): void {
  const now = deps.ctx.clock.now();
  const createdAt = new Date(now);
  const record: UsageRecord = {
    id: newId("use"),
    userId: meta.userId,
    keyId: meta.keyId,
    requestId: meta.requestId,
    endpoint: meta.endpoint,
    model: fields.model,
    type: fields.type,
    promptTokens: fields.promptTokens ?? 0,
    completionTokens: fields.completionTokens ?? 0,
    characters: fields.characters ?? 0,
    audioSeconds: fields.audioSeconds ?? 0,
    images: fields.images ?? 0,
    processingMs: Math.max(0, Math.round(performance.now() - meta.startedAt)),
    outputBytes: fields.outputBytes,
    costMicros: fields.costMicros,
    status: fields.status ?? "success",
    createdAt,
    day: createdAt.toISOString().slice(0, 10),
  };
  deps.usage.push(record);
}
