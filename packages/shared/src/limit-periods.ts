// CONTRACT 10: a key's spend limit applies per period; periods start at 00:00 UTC, weeks on Monday.

export const LIMIT_RESETS = ["never", "daily", "weekly", "monthly"] as const;
export type LimitReset = (typeof LIMIT_RESETS)[number];

/** The start of the period `at` falls in (the epoch for `never`). */
export function periodStart(reset: LimitReset, at: number): Date {
  if (reset === "never") return new Date(0);
  const d = new Date(at);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (reset === "daily") return new Date(day);
  if (reset === "weekly") return new Date(day - ((d.getUTCDay() + 6) % 7) * 86_400_000);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}
