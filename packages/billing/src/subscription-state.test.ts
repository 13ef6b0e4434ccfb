import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { currentStates, isNewer, type SubscriptionSnapshot, type SubscriptionStatus } from "./subscription-state";

const snap = (status: SubscriptionStatus, at: number, id = `${status}@${at}`): SubscriptionSnapshot => ({
  id, subscriptionId: "sub_1", userId: "usr_1", planId: "pro", status, at,
});

describe("subscription state", () => {
  it("takes the newest event", () => {
    expect(currentStates([snap("past_due", 30), snap("incomplete", 10), snap("active", 20)])[0]?.status).toBe("past_due");
  });

  it("breaks same-second ties by lifecycle order", () => {
    expect(isNewer(snap("active", 10), snap("incomplete", 10))).toBe(true);
    expect(isNewer(snap("incomplete", 10), snap("active", 10))).toBe(false);
  });

  it("never leaves a cancelled state, whatever arrives later", () => {
    expect(currentStates([snap("canceled", 10), snap("active", 99)])[0]?.status).toBe("canceled");
  });

  it("does not depend on delivery order (any permutation gives the same state)", () => {
    const statuses: SubscriptionStatus[] = ["incomplete", "trialing", "active", "past_due", "unpaid", "paused", "incomplete_expired", "canceled"];
    const arbSnap = fc.record({ status: fc.constantFrom(...statuses), at: fc.integer({ min: 0, max: 5 }) });
    fc.assert(fc.property(fc.array(arbSnap, { minLength: 1, maxLength: 8 }), (raw) => {
      const snaps = raw.map((r, i) => snap(r.status, r.at, `s${i}`));
      const reversed = [...snaps].reverse();
      const a = currentStates(snaps)[0];
      const b = currentStates(reversed)[0];
      expect(a?.status).toBe(b?.status);
      expect(a?.at).toBe(b?.at);
    }));
  });
});
