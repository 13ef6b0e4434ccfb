import { describe, expect, it } from "vitest";
import { formatCost, formatMoney } from "./format";

describe("formatMoney", () => {
  it("shows dollars with cents, whatever precision the API states", () => {
    expect(formatMoney(9.89995)).toBe("$9.90");
    expect(formatMoney(0.1)).toBe("$0.10");
    expect(formatMoney(4.987998)).toBe("$4.99");
    expect(formatMoney(0.012002)).toBe("$0.01");
    expect(formatMoney(0)).toBe("$0.00");
    expect(formatMoney(1234.5)).toBe("$1,234.50");
  });

  it("shows more digits only under a cent, sign first", () => {
    expect(formatMoney(0.004)).toBe("$0.004");
    expect(formatMoney(0.000007)).toBe("$0.000007");
    expect(formatMoney(-0.004)).toBe("-$0.004");
    expect(formatMoney(-2.5)).toBe("-$2.50");
  });
});

describe("formatCost", () => {
  it("is the one money format under its former name", () => {
    expect(formatCost(9.89995)).toBe("$9.90");
    expect(formatCost(0.000007)).toBe("$0.000007");
  });
});
