// Flux (BFL) protocol (imageB): submit POST {base}/v1/{model} with x-key → {id, polling_url};
// poll GET polling_url until status "Ready" (result.sample is the image URL). Pure transforms.
import { isIP } from "node:net";
import { AppError } from "@gw/shared";
import { z } from "zod";
import type { Endpoint } from "../endpoint";
import type { BuiltRequest } from "../openai/transform";
import type { GeneratedImage, ImageRequest } from "../types";
import { pickPath, readErrorMessage, upstreamStatusError, validationErrorMessage, wrongShape } from "../upstream-errors";

const submitResponseSchema = z.compile(z.looseObject({ id: z.string().min(1), polling_url: z.string().optional() }));
const pollResponseSchema = z.compile(z.looseObject({
  status: z.string(),
  result: z.looseObject({ sample: z.string().optional(), seed: z.number().int().optional() }).nullish(),
  details: z.unknown().optional(),
}));

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

const isAddress = (hostname: string) => isIP(hostname.replace(/^\[|\]$/g, "")) !== 0;
const isLoopback = (hostname: string) => /^127\.\d+\.\d+\.\d+$/.test(hostname) || hostname === "[::1]" || hostname === "localhost";

/**
 * Whether a host is on the upstream's own site: its base URL's host, or, for a DNS name, another host of the same
 * domain (its last two labels: BFL answers regional hosts such as api.us1.bfl.ai for api.bfl.ai). An IP address or
 * a one-label name is only itself, except that the loopback addresses are all this machine.
 */
function onSiteOf(hostname: string, baseHost: string): boolean {
  if (hostname === baseHost || (isLoopback(hostname) && isLoopback(baseHost))) return true;
  if (isAddress(baseHost) || !baseHost.includes(".")) return false;
  const site = baseHost.split(".").slice(-2).join(".");
  return hostname === site || hostname.endsWith(`.${site}`);
}

/** The polling URL receives our `x-key`, so it must be http(s) on the upstream's own site (a 502 at no cost otherwise). */
function checkedPollingUrl(pollingUrl: string, baseUrl: string): string {
  let polling: URL;
  try {
    polling = new URL(pollingUrl, `${baseUrl}/`);
  } catch {
    throw wrongShape("image submission");
  }
  if ((polling.protocol !== "https:" && polling.protocol !== "http:") || !onSiteOf(polling.hostname, new URL(baseUrl).hostname)) {
    throw new AppError("upstream_error", `The image provider named a polling URL outside its own site (${polling.hostname.slice(0, 100) || polling.protocol}); it was not polled.`);
  }
  return polling.toString();
}

export function parseSubmitResponse(json: unknown, endpoint: Endpoint): FluxTask {
  const parsed = submitResponseSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("image submission");
  const { id, polling_url: pollingUrl } = parsed.data;
  return {
    id,
    // older deployments answer without polling_url and expect get_result on the same host
    pollingUrl: pollingUrl ? checkedPollingUrl(pollingUrl, endpoint.baseUrl) : `${endpoint.baseUrl}/v1/get_result?id=${encodeURIComponent(id)}`,
  };
}

/**
 * BFL's poll statuses. Only `Pending` means "ask again"; anything not listed fails at once rather than being polled
 * until the deadline, since a status we cannot read will not turn into `Ready` by waiting.
 */
const PENDING = new Set(["Pending"]);
const MODERATED = new Set(["Content Moderated", "Request Moderated"]);
const FAILED = new Set(["Error", "Failed", "Task not found"]);

/** The sample must be an absolute http(s) URL: the caller gets it as `url`, and the adapter may download it. */
function sampleUrl(sample: string | undefined): string {
  let url: URL;
  try {
    url = new URL(sample ?? "");
  } catch {
    throw wrongShape("image result (the sample is not a URL)");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw wrongShape("image result (the sample is not an http(s) URL)");
  return url.href;
}

/** BFL names why it moderated a task in `details["Moderation Reasons"]` (e.g. "Derivative Works"): the category, for the caller. */
function moderationReasons(details: unknown): string {
  const reasons = pickPath(details, "Moderation Reasons");
  if (!Array.isArray(reasons)) return "";
  const named = reasons.filter((r): r is string => typeof r === "string" && r.trim().length > 0).slice(0, 5).join(", ");
  return named ? `: ${named.slice(0, 200)}` : "";
}

export function parsePollResponse(json: unknown): PollOutcome {
  const parsed = pollResponseSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("image status");
  const { status, result, details } = parsed.data;
  if (status === "Ready") return { state: "ready", url: sampleUrl(result?.sample), seed: result?.seed };
  if (PENDING.has(status)) return { state: "pending" };
  if (MODERATED.has(status)) {
    throw new AppError("content_policy_violation", `The image provider refused the prompt (${status}${moderationReasons(details)}).`);
  }
  if (FAILED.has(status)) throw new AppError("upstream_error", `The image provider failed to generate the image (${status}).`);
  throw new AppError("upstream_error", `The image provider answered an unknown task status (${status.slice(0, 50)}).`);
}

export function toGeneratedImage(outcome: { url: string; seed?: number }, req: ImageRequest, index: number): GeneratedImage {
  const seed = outcome.seed ?? (req.seed !== undefined ? req.seed + index : undefined);
  return { url: outcome.url, width: req.width, height: req.height, ...(seed !== undefined ? { seed } : {}) };
}

export function parseError(status: number, body: string): AppError {
  const message = readErrorMessage(body, (json) => {
    const detail = pickPath(json, "detail");
    // a 422 lists pydantic validation errors: name the first field and what was wrong with it
    if (Array.isArray(detail)) return validationErrorMessage(detail);
    return detail ?? pickPath(json, "message");
  });
  return upstreamStatusError(status, typeof message === "string" ? message : undefined);
}

/**
 * The ready sample's download: a signed URL on BFL's delivery host, fetched without our key, so a 403 or 404 there
 * means the URL expired or the result is gone, not that our credentials were refused.
 */
export function parseSampleError(status: number): AppError {
  return new AppError("upstream_error", `The image provider's result could not be downloaded (HTTP ${status} from its sample URL).`);
}
