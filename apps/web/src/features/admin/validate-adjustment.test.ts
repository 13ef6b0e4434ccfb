import { describe, expect, it } from "vitest";
import { validateAdjustment } from "./api";

describe("validateAdjustment", () => {
  it("takes signed dollars with at most two decimals", () => {
    for (const ok of ["5", "5.5", "-2.25", "+10.00", " 3 "]) expect(validateAdjustment(ok), ok).toBeNull();
  });

  it("refuses 0, three decimals and anything that is not a number", () => {
    expect(validateAdjustment("0")).toBe("The amount must not be 0.");
    expect(validateAdjustment("-0.00")).toBe("The amount must not be 0.");
    for (const bad of ["1.234", "", "five", "1e3", "--1", "$5"]) expect(validateAdjustment(bad), bad).toMatch(/at most two decimals/);
  });
});
