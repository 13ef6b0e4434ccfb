import { describe, expect, it } from "vitest";
import { periodStart } from "./limit-periods";

describe("periodStart", () => {
  // Wednesday 2031-01-15 13:45 UTC
  const at = Date.UTC(2031, 0, 15, 13, 45);
  it("daily, weekly (Monday), monthly at 00:00 UTC; never: the epoch", () => {
    expect(periodStart("daily", at).toISOString()).toBe("2031-01-15T00:00:00.000Z");
    expect(periodStart("weekly", at).toISOString()).toBe("2031-01-13T00:00:00.000Z");
    expect(periodStart("monthly", at).toISOString()).toBe("2031-01-01T00:00:00.000Z");
    expect(periodStart("never", at).getTime()).toBe(0);
  });
  it("a Sunday belongs to the week that began the Monday before; a Monday starts a new one", () => {
    expect(periodStart("weekly", Date.UTC(2031, 0, 19, 23, 59, 59)).toISOString()).toBe("2031-01-13T00:00:00.000Z");
    expect(periodStart("weekly", Date.UTC(2031, 0, 20)).toISOString()).toBe("2031-01-20T00:00:00.000Z");
  });
});
