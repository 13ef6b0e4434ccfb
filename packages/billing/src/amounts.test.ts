import { describe, expect, it } from "vitest";
import { AppError } from "@gw/shared";
import { purchaseAmountMicros, purchaseCurrency } from "./amounts";

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof AppError ? err.code : "not an AppError";
  }
};

describe("purchaseAmountMicros (CONTRACT 6)", () => {
  it.each([[1, 1_000_000], [10, 10_000_000], [19.99, 19_990_000], [0.1 + 0.2 + 9.7, 10_000_000], [10_000, 10_000_000_000]])("accepts %s dollars", (dollars, micros) => {
    expect(purchaseAmountMicros(dollars)).toBe(micros);
  });

  it.each([[0], [-5], [0.99], [10_000.01], [Number.NaN], [Number.POSITIVE_INFINITY], ["10"], [true], [[10]], [10.005]])("refuses %s with invalid_parameter", (value) => {
    expect(codeOf(() => purchaseAmountMicros(value))).toBe("invalid_parameter");
  });

  it("reports a missing amount as missing_required_parameter", () => {
    expect(codeOf(() => purchaseAmountMicros(undefined))).toBe("missing_required_parameter");
  });
});

describe("purchaseCurrency", () => {
  it("defaults to usd and accepts USD in any case", () => {
    expect(purchaseCurrency(undefined)).toBe("usd");
    expect(purchaseCurrency("USD")).toBe("usd");
  });
  it("refuses other currencies", () => {
    expect(codeOf(() => purchaseCurrency("eur"))).toBe("invalid_parameter");
  });
});
