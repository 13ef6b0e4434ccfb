import type { Database } from "@gw/db";
import type { HealthCheck } from "./health-checks";

/** The real database probe of /api/status/external: one ping round trip. */
export function databaseHealthCheck(db: Database, timeoutMs = 300): HealthCheck {
  return async () => {
    await db.ping(timeoutMs);
    return { status: "healthy" };
  };
}
