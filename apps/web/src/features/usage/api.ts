import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { apiFetch } from "../../lib/http";

// GET /api/usage is an Express route of the gateway (docs/api.md), not a tRPC procedure: its answer is declared here,
// once, for every page that reads it.

/** One record of GET /api/usage. */
export interface UsageRecord {
  id: string;
  /** the X-Request-Id the call was answered with */
  request_id: string;
  created_at: string;
  endpoint: string;
  model: string;
  type: string;
  /** null: made from the dashboard (session) */
  key_id: string | null;
  status: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  characters: number;
  audio_seconds: number;
  images: number;
  processing_ms: number;
  /** dollars */
  cost: number;
}

export interface UsageSums {
  requests: number;
  /** dollars */
  cost: number;
}

export interface UsageTotals extends UsageSums {
  total_tokens: number;
}

export interface UsageResponse {
  data: UsageRecord[];
  pagination: { page: number; per_page: number; total: number; total_pages: number };
  range: { from: string; to: string };
  totals: UsageTotals & {
    by_day: Array<UsageSums & { date: string }>;
    by_model: Array<UsageTotals & { model: string }>;
    /** CONTRACT 11; `key_id` null for calls made from the dashboard */
    by_key?: Array<UsageTotals & { key_id: string | null }>;
  };
}

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
  return useQuery({
    queryKey: ["usage", "page", filters, page],
    queryFn: () => apiFetch<UsageResponse>(`/api/usage?${usageQuery(filters, { page, per_page: LOG_PAGE_SIZE })}`),
    placeholderData: keepPreviousData,
  });
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
