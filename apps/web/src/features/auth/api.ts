import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ApiError, isSessionLost } from "../../lib/api-error";
import { apiFetch } from "../../lib/http";

export interface User {
  id: string;
  email: string;
  name: string;
  created_at: string;
  email_verified: boolean;
}

export const meKey = ["auth", "me"] as const;

/** The signed-in user, or null when there is no valid session (401 is an answer here, not an error). */
export function useMe() {
  return useQuery({
    queryKey: meKey,
    queryFn: async (): Promise<User | null> => {
      try {
        const { user } = await apiFetch<{ user: User }>("/api/auth/me");
        return user;
      } catch (err) {
        if (isSessionLost(err)) return null;
        throw err;
      }
    },
    staleTime: 60_000,
    retry: (count, err) => !(err instanceof ApiError) && count < 2,
    meta: { ignoreSessionLoss: true },
  });
}

export function useLogin() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (input: { email: string; password: string }) =>
      apiFetch<{ success: boolean; user: User }>("/api/auth/login", { method: "POST", body: input }),
    onSuccess: async () => {
      // Drop any data of a previous user, then load the fresh session's profile.
      qc.removeQueries({ predicate: (q) => q.queryKey[0] !== "auth" });
      await qc.invalidateQueries({ queryKey: meKey });
    },
    meta: { ignoreSessionLoss: true },
  });
}

export function useSignup() {
  return useMutation({
    mutationFn: (input: { name: string; email: string; password: string }) =>
      apiFetch<{ success: boolean; message: string; user: Omit<User, "email_verified"> }>("/api/auth/signup", { method: "POST", body: input }),
    meta: { ignoreSessionLoss: true },
  });
}

export function useLogout() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => apiFetch<{ success: boolean }>("/api/auth/logout", { method: "POST" }),
    onSettled: () => {
      qc.clear();
      qc.setQueryData(meKey, null);
    },
    meta: { ignoreSessionLoss: true },
  });
}

export function useVerifyEmail() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (token: string) => apiFetch<{ success: boolean; message: string }>("/api/auth/verify-email", { method: "POST", body: { token } }),
    onSuccess: () => qc.invalidateQueries({ queryKey: meKey }),
    meta: { ignoreSessionLoss: true },
  });
}

export function useResendVerification() {
  return useMutation({
    mutationFn: () => apiFetch<{ success: boolean; message: string }>("/api/auth/resend-verification", { method: "POST" }),
  });
}

export function useRequestPasswordReset() {
  return useMutation({
    mutationFn: (email: string) => apiFetch<{ success: boolean; message: string }>("/api/auth/password-reset", { method: "POST", body: { email } }),
    meta: { ignoreSessionLoss: true },
  });
}

export function useConfirmPasswordReset() {
  return useMutation({
    mutationFn: (input: { token: string; password: string }) =>
      apiFetch<{ success: boolean; message: string }>("/api/auth/password-reset/confirm", { method: "POST", body: input }),
    meta: { ignoreSessionLoss: true },
  });
}

/** Only same-site paths may be a post-login destination (no open redirect). */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/dashboard";
  if (next.startsWith("/login") || next.startsWith("/signup")) return "/dashboard";
  return next;
}
