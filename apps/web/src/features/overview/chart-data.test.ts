import { describe, expect, it } from "vitest";
import { niceMax, shapeChartData, type DailyUsageRow } from "./chart-data";

const today = Date.parse("2025-03-31T15:00:00Z");

describe("shapeChartData", () => {
  it("has one bar per day of the window, oldest first, also for days without usage", () => {
    const data = shapeChartData([], "cost", today);
    expect(data.days).toHaveLength(30);
    expect(data.days[0]?.date).toBe("2025-03-02");
    expect(data.days[29]?.date).toBe("2025-03-31");
    expect(data.total).toBe(0);
    expect(data.max).toBe(0);
  });

  it("stacks models per day, orders models by total and ignores rows outside the window", () => {
    const rows: DailyUsageRow[] = [
      { date: "2025-03-30", model: "textA-4", requests: 2, cost: 0.5 },
      { date: "2025-03-30", model: "textB-3-haiku", requests: 5, cost: 0.1 },
      { date: "2025-03-31", model: "textB-3-haiku", requests: 1, cost: 0.2 },
      { date: "2025-03-31", model: "textB-3-haiku", requests: 1, cost: 0.2 },
      { date: "2025-01-01", model: "imageB-1-dev", requests: 9, cost: 9 },
    ];
    const cost = shapeChartData(rows, "cost", today);
    expect(cost.models).toEqual(["textA-4", "textB-3-haiku"]);
    expect(cost.days[28]).toEqual({ date: "2025-03-30", total: 0.6, segments: [{ model: "textA-4", value: 0.5 }, { model: "textB-3-haiku", value: 0.1 }] });
    expect(cost.days[29]?.segments).toEqual([{ model: "textB-3-haiku", value: 0.4 }]);
    expect(cost.max).toBeCloseTo(0.6);
    expect(cost.total).toBeCloseTo(1.0);

    const requests = shapeChartData(rows, "requests", today);
    expect(requests.models).toEqual(["textB-3-haiku", "textA-4"]);
    expect(requests.total).toBe(9);
    expect(requests.max).toBe(7);
  });

  it("drops zero and invalid values instead of drawing empty segments", () => {
    const data = shapeChartData([{ date: "2025-03-31", model: "x", requests: 0, cost: Number.NaN }], "cost", today);
    expect(data.models).toEqual([]);
    expect(data.days[29]?.segments).toEqual([]);
  });
});

describe("niceMax", () => {
  it("rounds the axis up to 1, 2, 2.5 or 5 times a power of ten", () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(0.6)).toBe(1);
    expect(niceMax(7)).toBe(10);
    expect(niceMax(13)).toBe(20);
    expect(niceMax(2.2)).toBe(2.5);
    expect(niceMax(0.0031)).toBeCloseTo(0.005);
  });
});
