import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiFetch } from "../../lib/http";

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used: string | null;
  usage_count: number;
  status: string;
}

export interface CreatedKey {
  id: string;
  name: string;
  description: string;
  key: string;
  prefix: string;
  created_at: string;
  status: string;
}

export const keysKey = ["keys"] as const;

export function useKeys() {
  return useQuery({
    queryKey: keysKey,
    queryFn: () => apiFetch<{ keys: ApiKey[]; total: number }>("/api/keys"),
    // last_used and usage_count move while the page is open (CONTRACT 3: visible within 5 s).
    refetchInterval: 15_000,
  });
}

export function useCreateKey() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (input: { name: string; description?: string }) => apiFetch<CreatedKey>("/api/keys", { method: "POST", body: input }),
    onSuccess: () => qc.invalidateQueries({ queryKey: keysKey }),
  });
}

export function useRevokeKey() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiFetch<{ success: boolean; message: string; id: string }>(`/api/keys/${encodeURIComponent(id)}`, { method: "DELETE" }),
    onSettled: () => qc.invalidateQueries({ queryKey: keysKey }),
  });
}
