import { describe, expect, it } from "vitest";
import { backoffDelayMs, isRetryableStatus, parseRetryAfterMs } from "./retry-policy";

const policy = { maxRetries: 2, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 5_000 };

describe("retry policy", () => {
  it("retries 429 and 5xx only", () => {
    expect([429, 500, 502, 503, 529].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 422].some(isRetryableStatus)).toBe(false);
  });

  it("backs off exponentially with jitter, capped", () => {
    expect(backoffDelayMs(policy, 0, () => 0)).toBe(50);
    expect(backoffDelayMs(policy, 0, () => 1)).toBe(100);
    expect(backoffDelayMs(policy, 2, () => 1)).toBe(400);
    expect(backoffDelayMs(policy, 10, () => 1)).toBe(1_000);
  });

  it("reads Retry-After as seconds or a date", () => {
    expect(parseRetryAfterMs("2", 0)).toBe(2_000);
    expect(parseRetryAfterMs(["0.5"], 0)).toBe(500);
    expect(parseRetryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfterMs("soon", 0)).toBeUndefined();
    expect(parseRetryAfterMs(undefined, 0)).toBeUndefined();
  });
});
