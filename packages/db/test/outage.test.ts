import mongoose from "mongoose";
import { describe, expect, it } from "vitest";
import { databaseOutage } from "../src/outage";

// What the driver throws when the database goes away, as observed from a gateway whose FerretDB was killed.
describe("databaseOutage", () => {
  it("takes the driver's own network errors for an outage", () => {
    expect(databaseOutage(new mongoose.mongo.MongoNetworkError("connection closed"))?.code).toBe("service_unavailable");
  });

  it("takes a lost socket the driver passes through unwrapped for an outage, not an internal error", () => {
    // mongodb 6.x: a command written to a pooled connection whose server already closed it rejects with Node's own
    // error from net.Socket (writeAfterFIN), not a MongoNetworkError.
    const epipe = Object.assign(new Error("This socket has been ended by the other party"), { code: "EPIPE" });
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", errno: -104, syscall: "read" });
    for (const err of [epipe, reset]) {
      const outage = databaseOutage(err);
      expect(outage?.code).toBe("service_unavailable");
      expect(outage?.extras.retryAfterSeconds).toBe(5);
    }
  });

  it("leaves other errors alone", () => {
    expect(databaseOutage(new Error("boom"))).toBeUndefined();
    expect(databaseOutage(Object.assign(new Error("nope"), { code: "ENOENT" }))).toBeUndefined();
  });
});
