import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiFetch } from "../../lib/http";
import { meKey, type User } from "../auth/api";

export function useUpdateProfile() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (input: { name: string }) => apiFetch<{ user: User }>("/api/auth/me", { method: "PATCH", body: input }),
    onSuccess: ({ user }) => qc.setQueryData(meKey, user),
  });
}

export function useChangePassword() {
  return useMutation({
    mutationFn: (input: { current_password: string; new_password: string }) =>
      apiFetch<{ success: boolean; message: string }>("/api/auth/change-password", { method: "POST", body: input }),
  });
}

export function useDeleteAccount() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (input: { password?: string }) => apiFetch<{ success: boolean; message: string }>("/api/auth/me", { method: "DELETE", body: input }),
    onSuccess: () => {
      qc.clear();
      qc.setQueryData(meKey, null);
    },
  });
}
