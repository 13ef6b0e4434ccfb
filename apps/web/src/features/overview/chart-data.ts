// Shapes usage totals into the bars of the 30-day chart: one bar per day, stacked by model.

export interface DailyUsageRow {
  /** UTC day, YYYY-MM-DD */
  date: string;
  model: string;
  requests: number;
  /** dollars */
  cost: number;
}

export type ChartMetric = "cost" | "requests";

export interface ChartSegment {
  model: string;
  value: number;
}

export interface ChartDay {
  date: string;
  total: number;
  segments: ChartSegment[];
}

export interface ChartData {
  days: ChartDay[];
  /** models ordered by total, largest first: a stable colour order and legend */
  models: string[];
  max: number;
  total: number;
}

const DAY_MS = 86_400_000;

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Every day of the window (ending today, UTC) appears, also days without requests. */
export function shapeChartData(rows: readonly DailyUsageRow[], metric: ChartMetric, todayMs: number, days = 30): ChartData {
  const dates: string[] = [];
  for (let i = days - 1; i >= 0; i--) dates.push(utcDay(todayMs - i * DAY_MS));
  const inWindow = new Set(dates);

  const perDay = new Map<string, Map<string, number>>();
  const perModel = new Map<string, number>();
  for (const row of rows) {
    if (!inWindow.has(row.date)) continue;
    const value = metric === "cost" ? row.cost : row.requests;
    if (!Number.isFinite(value) || value <= 0) continue;
    const day = perDay.get(row.date) ?? new Map<string, number>();
    day.set(row.model, (day.get(row.model) ?? 0) + value);
    perDay.set(row.date, day);
    perModel.set(row.model, (perModel.get(row.model) ?? 0) + value);
  }

  const models = [...perModel.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([model]) => model);
  let max = 0;
  let total = 0;
  const result = dates.map((date): ChartDay => {
    const day = perDay.get(date);
    const segments = models.flatMap((model) => {
      const value = day?.get(model) ?? 0;
      return value > 0 ? [{ model, value }] : [];
    });
    const dayTotal = segments.reduce((sum, s) => sum + s.value, 0);
    max = Math.max(max, dayTotal);
    total += dayTotal;
    return { date, total: dayTotal, segments };
  });
  return { days: result, models, max, total };
}

/** A round axis maximum (1, 2, 2.5, 5 × 10^n) at or above the data maximum. */
export function niceMax(value: number): number {
  if (value <= 0) return 1;
  const exp = Math.floor(Math.log10(value));
  const base = 10 ** exp;
  for (const step of [1, 2, 2.5, 5, 10]) {
    if (step * base >= value - 1e-12) return step * base;
  }
  return 10 * base;
}
