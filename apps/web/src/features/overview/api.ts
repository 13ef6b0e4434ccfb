import { useQueries, useQuery } from "@tanstack/react-query";
import { apiFetch } from "../../lib/http";
import { utcDay, type DailyUsageRow } from "./chart-data";
import type { UsageResponse, UsageSums } from "../usage/api";

// Beyond this many models the smallest are drawn as one "other" segment, to bound the per-model requests.
const MAX_CHART_MODELS = 6;

const CHART_DAYS = 30;

/**
 * `from` of the charted range: the first of the chart's 30 UTC days (today and the 29 before). The API's default,
 * 30 × 24 h back from now, starts inside a 31st day that no bar shows, so the total would not be the bars' sum.
 */
export function usageFrom(nowMs: number): string {
  return utcDay(nowMs - (CHART_DAYS - 1) * 86_400_000);
}

/** The chart's 30 UTC days: the latest records and totals per day and per model. */
export function useUsage() {
  return useQuery({
    queryKey: ["usage", "recent"],
    queryFn: () => apiFetch<UsageResponse>(`/api/usage?per_page=20&from=${usageFrom(Date.now())}`),
    refetchInterval: 30_000,
  });
}

/**
 * Daily totals split by model. The API gives per-day and per-model totals separately, so each charted model's
 * days come from a `model=` filtered call; whatever is left of a day's total is "other".
 */
export function useDailyByModel(usage: UsageResponse | undefined): { rows: DailyUsageRow[]; pending: boolean; error: unknown } {
  const models = [...(usage?.totals.by_model ?? [])].sort((a, b) => b.cost - a.cost || b.requests - a.requests).slice(0, MAX_CHART_MODELS).map((m) => m.model);
  const perModel = useQueries({
    queries: models.map((model) => ({
      queryKey: ["usage", "by-model", model, usage?.totals.requests],
      queryFn: () => apiFetch<UsageResponse>(`/api/usage?per_page=1&from=${usageFrom(Date.now())}&model=${encodeURIComponent(model)}`),
      staleTime: 30_000,
    })),
  });
  if (!usage) return { rows: [], pending: true, error: null };
  const error = perModel.find((q) => q.error)?.error ?? null;
  const pending = perModel.some((q) => q.isPending);
  return { rows: splitByModel(usage.totals.by_day, models.map((model, i) => ({ model, days: perModel[i]?.data?.totals.by_day ?? [] }))), pending, error };
}

export function splitByModel(
  allDays: ReadonlyArray<UsageSums & { date: string }>,
  perModel: ReadonlyArray<{ model: string; days: ReadonlyArray<UsageSums & { date: string }> }>,
): DailyUsageRow[] {
  const rows: DailyUsageRow[] = [];
  const used = new Map<string, UsageSums>();
  for (const { model, days } of perModel) {
    for (const day of days) {
      rows.push({ date: day.date, model, requests: day.requests, cost: day.cost });
      const sum = used.get(day.date) ?? { requests: 0, cost: 0 };
      used.set(day.date, { requests: sum.requests + day.requests, cost: sum.cost + day.cost });
    }
  }
  for (const day of allDays) {
    const sum = used.get(day.date) ?? { requests: 0, cost: 0 };
    const requests = day.requests - sum.requests;
    // Rounded dollars can leave dust; only a real remainder becomes an "other" segment.
    const cost = Math.round((day.cost - sum.cost) * 1e6) / 1e6;
    if (requests > 0 || cost > 0) rows.push({ date: day.date, model: "other", requests: Math.max(0, requests), cost: Math.max(0, cost) });
  }
  return rows;
}
