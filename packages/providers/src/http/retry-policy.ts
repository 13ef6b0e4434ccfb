// When and how long to wait before repeating an upstream call. Pure functions, unit tested.

export interface RetryPolicy {
  /** retries after the first attempt (so attempts = maxRetries + 1) */
  maxRetries: number;
  /** first backoff step; doubles each retry */
  baseDelayMs: number;
  /** cap of one backoff step */
  maxDelayMs: number;
  /** a Retry-After longer than this is not waited for: the call fails at once */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_TIMING = { baseDelayMs: 200, maxDelayMs: 2_000, maxRetryAfterMs: 5_000 } as const;

/** 429 and every 5xx are worth repeating; other statuses are the request's own fault. */
export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500;

/** Exponential backoff with "full jitter" so that many clients retrying at once spread out. */
export function backoffDelayMs(policy: RetryPolicy, retryIndex: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retryIndex);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfterMs(header: string | string[] | undefined, nowMs: number): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
