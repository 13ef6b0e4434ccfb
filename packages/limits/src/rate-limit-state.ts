import { AppError, type ErrorCode } from "@gw/shared";

/** Where one rate limit stands for one caller. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** ms epoch when the window resets */
  resetAt: number;
}

/** The X-RateLimit-* headers (SPEC 8, CONTRACT 7) of a state: the only place they are spelled out. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(state.limit),
    "X-RateLimit-Remaining": String(state.remaining),
    "X-RateLimit-Reset": String(Math.ceil(state.resetAt / 1000)),
  };
}

/** Puts a state's X-RateLimit-* on an answer (an Express or Node response). */
export function setRateLimitHeaders(res: { setHeader(name: string, value: string): unknown }, state: RateLimitState): void {
  for (const [name, value] of Object.entries(rateLimitHeaders(state))) res.setHeader(name, value);
}

/** 429 `code` with Retry-After, the state's X-RateLimit-* and, in the message, when to try again (ISO 8601). */
export function rateLimitRefusal(code: ErrorCode, text: string, state: RateLimitState, nowMs: number, retryInMs: number): AppError {
  return new AppError(code, `${text} Try again after ${new Date(nowMs + retryInMs).toISOString()}.`, {
    retryAfterSeconds: Math.max(1, Math.ceil(retryInMs / 1000)),
    headers: rateLimitHeaders(state),
  });
}
