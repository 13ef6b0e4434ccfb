import { inject } from "vitest";
import { connectDatabase, type Database } from "@gw/db";
import { createLedger, type Ledger } from "@gw/billing";
import { randomBase62, systemClock } from "@gw/shared";

/** A database of its own on the suite's FerretDB (`<prefix>_<random>`), for gateway processes started by one test file. */
export const freshDatabaseUri = (prefix: string): string => inject("mongoUri").replace(/\/[^/]*$/, `/${prefix}_${randomBase62(10)}`);

/**
 * The ledger of the database that gateway processes use, opened by the test itself to fund users and check sums:
 * no background flush or heartbeat, so it never holds credits of its own.
 */
export async function openLedger(mongoUri: string): Promise<{ db: Database; ledger: Ledger }> {
  const db = await connectDatabase(mongoUri);
  return { db, ledger: await createLedger(db, systemClock, { holdTtlSeconds: 900, flushIntervalMs: 0, heartbeatIntervalMs: 0 }) };
}
