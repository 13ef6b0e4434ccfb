// The mapping every adapter's parseError shares: what an upstream status means for our caller.
import { AppError } from "@gw/shared";

const MAX_MESSAGE = 300;

/** Best-effort extraction of a human message from an error body (JSON or text). */
export function readErrorMessage(body: string, pick: (json: unknown) => unknown): string | undefined {
  let message: unknown;
  try {
    message = pick(JSON.parse(body) as unknown);
  } catch {
    message = body.trim().startsWith("<") ? undefined : body.trim();
  }
  if (typeof message !== "string" || message.length === 0) return undefined;
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message;
}

/**
 * 400/413/422: the request itself was refused (e.g. a passed-through field), so the caller learns why (400).
 * Anything else (auth, 404 model, 429/5xx after retries): our upstream failed, 502 without charging. A refusal of the
 * gateway's own upstream credentials (401/403) keeps the upstream's wording to itself: it concerns the operator's
 * account, and may quote part of its key. So does a 402 (the operator's account with the provider cannot pay): its
 * "Insufficient credits" would read as the caller's own balance. So does a 429: OpenAI's and Anthropic's name the
 * operator's organization and its quota ("in organization org-…", "You exceeded your current quota").
 * The first two are the operator's configuration, as an unconfigured provider is: `x-should-retry: false` keeps the
 * OpenAI SDKs, which retry every 5xx, from sending the request again to meet the same refusal.
 */
const DO_NOT_RETRY = { headers: { "x-should-retry": "false" } };

export function upstreamStatusError(status: number, message: string | undefined): AppError {
  if (status === 401 || status === 403) {
    return new AppError("upstream_error", `The upstream provider failed (HTTP ${status}): it refused the gateway's credentials.`, DO_NOT_RETRY);
  }
  if (status === 402) {
    return new AppError("upstream_error", "The upstream provider failed (HTTP 402): it refused the gateway's account for payment.", DO_NOT_RETRY);
  }
  if (status === 429) {
    return new AppError("upstream_error", "The upstream provider failed (HTTP 429): it is rate-limiting the gateway.");
  }
  if (status === 400 || status === 413 || status === 422) {
    return new AppError("invalid_parameter", `The upstream provider rejected the request: ${sentence(message ?? `HTTP ${status}`)}`);
  }
  return new AppError("upstream_error", `The upstream provider failed (HTTP ${status})${message ? `: ${sentence(message)}` : "."}`);
}

/** The upstream's message as the end of our sentence: its own final stop kept, one added otherwise. */
export const sentence = (message: string): string => (/[.!?…]$/.test(message) ? message : `${message}.`);

export const wrongShape = (what: string) => new AppError("upstream_error", `The upstream provider sent an unexpected ${what} answer.`);

/**
 * FastAPI's `detail` list of validation errors (Flux, ElevenLabs answer 422 with it): the first one as
 * "<field>: <what was wrong>", so the caller learns which field was refused.
 */
export function validationErrorMessage(detail: unknown[]): unknown {
  const loc = pickPath(detail[0], "loc");
  const msg = pickPath(detail[0], "msg");
  return Array.isArray(loc) && typeof msg === "string" ? `${loc.filter((part) => part !== "body").join(".")}: ${msg}` : msg;
}

/** A property path inside parsed JSON, or undefined. */
export function pickPath(json: unknown, ...path: string[]): unknown {
  let current = json;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
