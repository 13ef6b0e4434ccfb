import type { Request, Response } from "express";
import { KEY_PREFIX_LENGTH } from "@gw/auth";
import { bearerToken } from "@gw/shared";
import type { RequestObservation } from "./request-observation";

/** The units a request was charged for; only those it used. */
export interface AccessLogUnits {
  promptTokens?: number;
  completionTokens?: number;
  characters?: number;
  audioSeconds?: number;
  images?: number;
}

/**
 * CONTRACT 14's line per gateway request (pino, info, message `gateway request`). Never a secret or a body: the key
 * appears only as its visible prefix (CONTRACT 3), the model only when it is a configured one.
 */
export interface AccessLogLine {
  requestId: string;
  userId?: string;
  keyPrefix?: string;
  model: string;
  endpoint: string;
  method: string;
  status: number;
  /** the error code answered (4xx/5xx) */
  errorCode?: string;
  /** `partial`: a stream cut after its output began, charged for what it produced */
  usageStatus?: string;
  units?: AccessLogUnits;
  /** micro-dollars charged */
  costMicros?: number;
  latencyMs: number;
  /** time spent waiting for upstreams, every attempt included */
  upstreamMs?: number;
}

const roundMs = (ms: number): number => Math.round(ms * 10) / 10;

function unitsOf(observation: RequestObservation): AccessLogUnits | undefined {
  const usage = observation.usage;
  if (!usage) return undefined;
  const units: AccessLogUnits = {};
  if (usage.promptTokens) units.promptTokens = usage.promptTokens;
  if (usage.completionTokens) units.completionTokens = usage.completionTokens;
  if (usage.characters) units.characters = usage.characters;
  if (usage.audioSeconds) units.audioSeconds = usage.audioSeconds;
  if (usage.images) units.images = usage.images;
  return units;
}

/** The model a request named: the one it was charged for, else its body's `model` when configured, else `none`. */
function modelOf(req: Request, observation: RequestObservation, knownModels: Set<string>): string {
  if (observation.usage) return observation.usage.model;
  const named = (req.body as { model?: unknown } | undefined)?.model;
  return typeof named === "string" && knownModels.has(named) ? named : "none";
}

export function accessLogLine(
  req: Request,
  res: Response,
  observation: RequestObservation,
  facts: { status: number; latencyMs: number; knownModels: Set<string> },
): AccessLogLine {
  const locals = res.locals as { requestId?: unknown; endpoint: string; errorCode?: string; principal?: { userId: string; keyId?: string } };
  const principal = locals.principal;
  const line: AccessLogLine = {
    requestId: String(locals.requestId),
    model: modelOf(req, observation, facts.knownModels),
    endpoint: locals.endpoint,
    method: req.method,
    status: facts.status,
    latencyMs: roundMs(facts.latencyMs),
  };
  if (principal) line.userId = principal.userId;
  if (principal?.keyId) line.keyPrefix = bearerToken(req.get("authorization") ?? "")?.slice(0, KEY_PREFIX_LENGTH);
  if (locals.errorCode && facts.status >= 400) line.errorCode = locals.errorCode;
  if (observation.usage?.status === "partial") line.usageStatus = "partial";
  const units = unitsOf(observation);
  if (units) line.units = units;
  if (observation.cost !== undefined) line.costMicros = observation.cost;
  if (observation.upstreamMs !== undefined) line.upstreamMs = roundMs(observation.upstreamMs);
  return line;
}

/**
 * The outcome label of gateway_requests_total: `success`, `partial` (a stream cut after output began),
 * `client_closed` (the client left before an answer), else the error code answered (a bounded set: the spec's codes).
 */
export function gatewayOutcome(status: number, line: AccessLogLine): string {
  if (status < 400) return line.usageStatus === "partial" ? "partial" : "success";
  if (status === 499) return "client_closed";
  return line.errorCode ?? `${Math.trunc(status / 100)}xx`;
}
