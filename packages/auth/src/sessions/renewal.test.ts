import { describe, expect, it } from "vitest";
import { initialExpiry, renewedExpiry, type RenewalPolicy } from "./renewal";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const policy: RenewalPolicy = { ttlMs: 7 * DAY, maxMs: 30 * DAY, minIntervalMs: 5 * MIN };
const t0 = 1_700_000_000_000;

describe("session renewal", () => {
  it("starts with the sliding lifetime", () => {
    expect(initialExpiry(t0, policy)).toBe(t0 + 7 * DAY);
    expect(initialExpiry(t0, { ...policy, maxMs: DAY })).toBe(t0 + DAY);
  });

  it("slides the expiry forward on use", () => {
    const session = { createdAt: t0, renewedAt: t0, expiresAt: t0 + 7 * DAY };
    expect(renewedExpiry(session, t0 + 3 * DAY, policy)).toBe(t0 + 10 * DAY);
  });

  it("does not renew more often than the minimum interval", () => {
    const session = { createdAt: t0, renewedAt: t0, expiresAt: t0 + 7 * DAY };
    expect(renewedExpiry(session, t0 + 4 * MIN, policy)).toBeNull();
    expect(renewedExpiry(session, t0 + 5 * MIN, policy)).toBe(t0 + 5 * MIN + 7 * DAY);
  });

  it("never extends past the absolute cap after login", () => {
    const session = { createdAt: t0, renewedAt: t0 + 25 * DAY, expiresAt: t0 + 30 * DAY - MIN };
    expect(renewedExpiry(session, t0 + 28 * DAY, policy)).toBe(t0 + 30 * DAY);
    const capped = { createdAt: t0, renewedAt: t0 + 28 * DAY, expiresAt: t0 + 30 * DAY };
    expect(renewedExpiry(capped, t0 + 29 * DAY, policy)).toBeNull();
  });

  it("never revives an expired session", () => {
    const session = { createdAt: t0, renewedAt: t0, expiresAt: t0 + 7 * DAY };
    expect(renewedExpiry(session, t0 + 7 * DAY, policy)).toBeNull();
    expect(renewedExpiry(session, t0 + 8 * DAY, policy)).toBeNull();
  });
});
