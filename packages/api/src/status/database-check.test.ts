import { PingTimeoutError } from "@gw/db";
import { describe, expect, it } from "vitest";
import { ANSWERED_RECENTLY_MS, databaseServes } from "./database-check";

/** A database whose ping ends as told, and which last answered `answeredAgoMs` before `now`. */
function database(ping: () => Promise<void>, answeredAgoMs: number) {
  const now = 1_000_000;
  return { db: { ping, lastAnsweredAt: () => now - answeredAgoMs }, now: () => now };
}

describe("databaseServes (GET /api/status)", () => {
  it("a ping answered within the budget: up", async () => {
    const { db, now } = database(async () => undefined, 60_000);
    expect(await databaseServes(db, now)).toBe(true);
  });

  it("a ping that times out while the database answered moments ago: busy, still up", async () => {
    const { db, now } = database(async () => { throw new PingTimeoutError(); }, 900);
    expect(await databaseServes(db, now)).toBe(true);
  });

  it("a ping that times out with no answer for longer than the window: down", async () => {
    const { db, now } = database(async () => { throw new PingTimeoutError(); }, ANSWERED_RECENTLY_MS + 1);
    expect(await databaseServes(db, now)).toBe(false);
  });

  it("a ping that fails (connection refused, closed client): down at once, however recent the last answer", async () => {
    const { db, now } = database(async () => { throw new Error("connect ECONNREFUSED"); }, 10);
    expect(await databaseServes(db, now)).toBe(false);
  });
});
