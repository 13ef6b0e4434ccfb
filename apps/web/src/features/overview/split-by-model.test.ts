import { describe, expect, it } from "vitest";
import { splitByModel, usageFrom } from "./api";
import { shapeChartData } from "./chart-data";

describe("splitByModel", () => {
  it("uses each charted model's days and puts what is left of a day's total under other", () => {
    const rows = splitByModel(
      [{ date: "2025-03-30", requests: 5, cost: 0.5 }, { date: "2025-03-31", requests: 1, cost: 0.1 }],
      [{ model: "textA-4", days: [{ date: "2025-03-30", requests: 3, cost: 0.3 }] }],
    );
    expect(rows).toEqual([
      { date: "2025-03-30", model: "textA-4", requests: 3, cost: 0.3 },
      { date: "2025-03-30", model: "other", requests: 2, cost: 0.2 },
      { date: "2025-03-31", model: "other", requests: 1, cost: 0.1 },
    ]);
  });

  it("adds no other segment when the charted models cover the day (rounding dust ignored)", () => {
    const rows = splitByModel(
      [{ date: "2025-03-30", requests: 2, cost: 0.3 }],
      [{ model: "a", days: [{ date: "2025-03-30", requests: 1, cost: 0.1 }] }, { model: "b", days: [{ date: "2025-03-30", requests: 1, cost: 0.2 }] }],
    );
    expect(rows.map((r) => r.model)).toEqual(["a", "b"]);
  });
});

describe("usageFrom", () => {
  it("asks for the chart's 30 UTC days, not 30 x 24 h that start inside a 31st day no bar shows", () => {
    const now = Date.parse("2026-11-24T02:45:00Z");
    expect(usageFrom(now)).toBe("2026-10-26");
    expect(shapeChartData([], "cost", now).days[0]?.date).toBe(usageFrom(now));
  });
});
