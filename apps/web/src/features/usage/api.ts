import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { apiFetch } from "../../lib/http";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@gw/api";
import { trpc } from "../../trpc";

// The usage answer is the `usage.list` procedure's, the same as GET /api/usage's JSON (which the overview, the search
// and the CSV export read): its types come from the router, narrowed to what the pages read.

type Answer = inferRouterOutputs<AppRouter>["usage"]["list"];
type Totals = Answer["totals"];
type Tokens = "requests" | "cost" | "total_tokens";

/** One record of the usage answer, as the pages read it. */
export type UsageRecord = Pick<Answer["data"][number], "id" | "request_id" | "created_at" | "endpoint" | "model" | "type" | "key_id"
  | "status" | "prompt_tokens" | "completion_tokens" | "total_tokens" | "characters" | "audio_seconds" | "images" | "processing_ms" | "cost">;

export type UsageSums = Pick<Totals, "requests" | "cost">;

/** The usage answer as the pages read it (a breakdown by key shown when given). */
export type UsageResponse = Pick<Answer, "pagination" | "range"> & {
  data: UsageRecord[];
  totals: Pick<Totals, Tokens> & {
    by_day: Array<Pick<Totals["by_day"][number], "date" | "requests" | "cost">>;
    by_model: Array<Pick<Totals["by_model"][number], "model" | Tokens>>;
    by_key?: Array<Pick<Totals["by_key"][number], "key_id" | Tokens>>;
  };
};

type UsageInput = inferRouterInputs<AppRouter>["usage"]["list"];

/** The filters of the usage page; `from` and `to` are UTC days (YYYY-MM-DD), `to` included. */
export interface UsageFilters {
  from: string;
  to: string;
  model?: string;
  key_id?: string;
}

/** The query string of GET /api/usage for these filters plus page-specific parameters (empty values left out). */
export function usageQuery(filters: UsageFilters, extra: Record<string, string | number | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...filters, ...extra })) {
    if (value !== undefined && value !== "") params.set(name, String(value));
  }
  return params.toString();
}

/** The CSV export of every record of the filtered range (CONTRACT 11: `format=csv` streams them all). */
export function usageCsvUrl(filters: UsageFilters): string {
  return `/api/usage?${usageQuery(filters, { format: "csv" })}`;
}

export const LOG_PAGE_SIZE = 25;

/** One page of the request log with the range's totals (by day, model and key). */
export function useUsagePage(filters: UsageFilters, page: number) {
  const input: UsageInput = { page: String(page), per_page: String(LOG_PAGE_SIZE) };
  for (const name of ["from", "to", "model", "key_id"] as const) if (filters[name]) input[name] = filters[name];
  return trpc.usage.list.useQuery(input, { placeholderData: keepPreviousData });
}

const SEARCH_PAGE_SIZE = 100;
const SEARCH_MAX_PAGES = 20;

/** The record answered with this request id, or its usage record id, in the filtered range; null when none. */
export async function findRequest(filters: UsageFilters, requestId: string): Promise<UsageRecord | null> {
  const wanted = requestId.trim();
  // `request_id` narrows the answer where the API supports it; otherwise the range is read page by page.
  for (let page = 1; page <= SEARCH_MAX_PAGES; page++) {
    const res = await apiFetch<UsageResponse>(`/api/usage?${usageQuery(filters, { request_id: wanted, page, per_page: SEARCH_PAGE_SIZE })}`);
    const found = res.data.find((r) => r.request_id === wanted || r.id === wanted);
    if (found) return found;
    if (page >= res.pagination.total_pages) return null;
  }
  return null;
}

export function useFindRequest(filters: UsageFilters, requestId: string | null) {
  return useQuery({
    queryKey: ["usage", "find", filters, requestId],
    queryFn: () => findRequest(filters, requestId ?? ""),
    enabled: requestId !== null && requestId.trim() !== "",
  });
}

const DAY_MS = 86_400_000;

/** A UTC day (YYYY-MM-DD) `daysBack` days before the given instant. */
export function utcDayBefore(nowMs: number, daysBack: number): string {
  return new Date(nowMs - daysBack * DAY_MS).toISOString().slice(0, 10);
}

/** The last `days` UTC days, today included. */
export function lastDays(nowMs: number, days: number): UsageFilters {
  return { from: utcDayBefore(nowMs, days - 1), to: utcDayBefore(nowMs, 0) };
}
