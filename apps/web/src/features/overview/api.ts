import { useQuery } from "@tanstack/react-query";
import { apiFetch } from "../../lib/http";
import type { DailyUsageRow } from "./chart-data";

export interface UsageRecord {
  id: string;
  created_at: string;
  model: string;
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  characters?: number;
  images?: number;
  /** dollars */
  cost: number;
  latency_ms: number;
}

export interface UsageResponse {
  records: UsageRecord[];
  daily: DailyUsageRow[];
}

export function useUsage(days = 30) {
  return useQuery({
    queryKey: ["usage", days],
    queryFn: () => apiFetch<UsageResponse>(`/api/usage?days=${days}`),
    refetchInterval: 30_000,
  });
}
