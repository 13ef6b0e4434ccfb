import { isPingTimeout, type Database } from "@gw/db";
import type { HealthCheck } from "./health-checks";

/**
 * The real database probe of /api/status/external: one ping round trip. The report is public, so a failure says
 * what failed, not the driver's message (which can name hosts or internals).
 */
export function databaseHealthCheck(db: Database, timeoutMs = 300): HealthCheck {
  return async () => {
    try {
      await db.ping(timeoutMs);
    } catch {
      return { status: "unhealthy", issue: "the database did not answer" };
    }
    return { status: "healthy" };
  };
}

/** GET /api/status waits this long for its own ping, so that it answers within 100 ms (CONTRACT 8). */
export const STATUS_PING_BUDGET_MS = 60;
/** A database that answered a ping this recently is busy, not down, when a status ping finds it slow. */
export const ANSWERED_RECENTLY_MS = 5_000;

/**
 * Whether GET /api/status may say the service is up: the database answers its ping within the budget, or was only
 * slow to (no error) and answered one within the last few seconds (the instance's background pings keep that
 * fresh). A busy database under load is then no reason for a load balancer to pull a working instance, while one
 * that is down (the ping fails) is reported at once, and one that hangs within `ANSWERED_RECENTLY_MS`.
 */
export async function databaseServes(db: Pick<Database, "ping" | "lastAnsweredAt">, now: () => number = Date.now): Promise<boolean> {
  try {
    await db.ping(STATUS_PING_BUDGET_MS);
    return true;
  } catch (err) {
    return isPingTimeout(err) && now() - db.lastAnsweredAt() <= ANSWERED_RECENTLY_MS;
  }
}
