// Flux (BFL) protocol (imageB): submit POST {base}/v1/{model} with x-key → {id, polling_url};
// poll GET polling_url until status "Ready" (result.sample is the image URL). Pure transforms.
import { AppError } from "@gw/shared";
import { z } from "zod";
import type { Endpoint } from "../endpoint";
import type { BuiltRequest } from "../openai/transform";
import type { GeneratedImage, ImageRequest } from "../types";
import { pickPath, readErrorMessage, upstreamStatusError, wrongShape } from "../upstream-errors";

const submitResponseSchema = z.looseObject({ id: z.string().min(1), polling_url: z.string().optional() });
const pollResponseSchema = z.looseObject({
  status: z.string(),
  result: z.looseObject({ sample: z.string().optional(), seed: z.number().int().optional() }).nullish(),
});

export interface FluxTask {
  id: string;
  pollingUrl: string;
}

export type PollOutcome = { state: "pending" } | { state: "ready"; url: string; seed?: number };

/** Flux has no style or negative prompt field; the style travels in the prompt. */
const promptWithStyle = (prompt: string, style: string | undefined): string => (style ? `${prompt}, ${style} style` : prompt);

/**
 * One submission; `index` > 0 offsets a given seed so that N images of one request differ
 * yet stay reproducible.
 */
export function buildSubmitRequest(endpoint: Endpoint, upstreamModel: string, req: ImageRequest, index: number): BuiltRequest {
  const body: Record<string, unknown> = { prompt: promptWithStyle(req.prompt, req.style), width: req.width, height: req.height };
  if (req.steps !== undefined) body.steps = req.steps;
  if (req.guidanceScale !== undefined) body.guidance = req.guidanceScale;
  if (req.seed !== undefined) body.seed = req.seed + index;
  return {
    url: `${endpoint.baseUrl}/v1/${encodeURIComponent(upstreamModel)}`,
    headers: { "content-type": "application/json", "x-key": endpoint.apiKey, accept: "application/json" },
    body: JSON.stringify(body),
  };
}

export function parseSubmitResponse(json: unknown, endpoint: Endpoint): FluxTask {
  const parsed = submitResponseSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("image submission");
  const { id, polling_url: pollingUrl } = parsed.data;
  return {
    id,
    // older deployments answer without polling_url and expect get_result on the same host
    pollingUrl: pollingUrl ? new URL(pollingUrl, `${endpoint.baseUrl}/`).toString() : `${endpoint.baseUrl}/v1/get_result?id=${encodeURIComponent(id)}`,
  };
}

const MODERATED = new Set(["Content Moderated", "Request Moderated"]);
const FAILED = new Set(["Error", "Failed", "Task not found"]);

export function parsePollResponse(json: unknown): PollOutcome {
  const parsed = pollResponseSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("image status");
  const { status, result } = parsed.data;
  if (status === "Ready") {
    if (!result?.sample) throw wrongShape("image result");
    return { state: "ready", url: result.sample, seed: result.seed };
  }
  if (MODERATED.has(status)) {
    throw new AppError("content_policy_violation", `The image provider refused the prompt (${status}).`);
  }
  if (FAILED.has(status)) throw new AppError("upstream_error", `The image provider failed to generate the image (${status}).`);
  return { state: "pending" };
}

export function toGeneratedImage(outcome: { url: string; seed?: number }, req: ImageRequest, index: number): GeneratedImage {
  const seed = outcome.seed ?? (req.seed !== undefined ? req.seed + index : undefined);
  return { url: outcome.url, width: req.width, height: req.height, ...(seed !== undefined ? { seed } : {}) };
}

export function parseError(status: number, body: string): AppError {
  const message = readErrorMessage(body, (json) => pickPath(json, "detail") ?? pickPath(json, "message"));
  return upstreamStatusError(status, typeof message === "string" ? message : undefined);
}
