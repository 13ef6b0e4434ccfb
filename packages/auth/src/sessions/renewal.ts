/** Renewal settings, in milliseconds. */
export interface RenewalPolicy {
  /** sliding lifetime (SESSION_TTL_DAYS) */
  ttlMs: number;
  /** absolute cap after login (SESSION_MAX_DAYS) */
  maxMs: number;
  /** renew at most this often, so busy sessions do not write on every request */
  minIntervalMs: number;
}

export interface SessionTimes {
  createdAt: number;
  expiresAt: number;
  renewedAt: number;
}

/** First expiry of a new session. */
export const initialExpiry = (now: number, policy: RenewalPolicy): number => now + Math.min(policy.ttlMs, policy.maxMs);

/**
 * The new expiry when a session used at `now` should be renewed, else null: not due yet, already at the
 * absolute cap, or already expired (an expired session is never revived).
 */
export function renewedExpiry(session: SessionTimes, now: number, policy: RenewalPolicy): number | null {
  if (session.expiresAt <= now) return null;
  if (now - session.renewedAt < policy.minIntervalMs) return null;
  const next = Math.min(now + policy.ttlMs, session.createdAt + policy.maxMs);
  return next > session.expiresAt ? next : null;
}
