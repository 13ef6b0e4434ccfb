import type { Database } from "@gw/db";
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
