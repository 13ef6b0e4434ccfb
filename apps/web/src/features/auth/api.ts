import { useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@gw/api";
import { ApiError, normalizeError, sessionLossCode } from "../../lib/api-error";
import { recordSessionLoss } from "../../lib/session-events";
import { trpc } from "../../trpc";

export type User = inferRouterOutputs<AppRouter>["auth"]["me"]["user"];

export const meKey = ["auth", "me"] as const;

// Auth screens handle their own 401s (wrong password, no session yet): they must not bounce to /login.
const quiet = { meta: { ignoreSessionLoss: true } };

/**
 * The signed-in user, or null when there is no valid session. Asked through `auth.session`, which answers "nobody"
 * with a 200, so a signed-out page logs no failed request; a 401 from elsewhere still counts as a lost session.
 */
export function useMe() {
  const client = trpc.useUtils().client;
  return useQuery({
    queryKey: meKey,
    queryFn: async (): Promise<User | null> => {
      try {
        const { user, ended } = await client.auth.session.query();
        if (!user) recordSessionLoss(ended);
        return user;
      } catch (err) {
        const code = sessionLossCode(err);
        if (!code) throw normalizeError(err);
        recordSessionLoss(code);
        return null;
      }
    },
    staleTime: 60_000,
    retry: (count, err) => !(err instanceof ApiError) && count < 2,
    ...quiet,
  });
}

/**
 * After login, logout or a lost session nothing cached for the previous session survives. The me query itself is
 * updated in place, not removed: mounted observers (the auth gates) stay attached to it and re-render at once.
 */
export function resetSession(qc: QueryClient, user: User | null, ended: "logged_out" | "account_deleted" | null = null): void {
  recordSessionLoss(ended);
  qc.removeQueries({ predicate: (q) => q.queryKey[0] !== meKey[0] || q.queryKey[1] !== meKey[1] });
  qc.setQueryData(meKey, user);
}

function useResetSession() {
  const qc = useQueryClient();
  return (user: User | null, ended: "logged_out" | null = null) => resetSession(qc, user, ended);
}

export function useLogin() {
  const reset = useResetSession();
  // RedirectIfSignedIn sees the user in the cache and moves on to `next`.
  return trpc.auth.login.useMutation({ onSuccess: ({ user }) => reset(user), ...quiet });
}

export function useSignup() {
  return trpc.auth.signup.useMutation(quiet);
}

export function useLogout() {
  const reset = useResetSession();
  return trpc.auth.logout.useMutation({ onSettled: () => reset(null, "logged_out"), ...quiet });
}

export function useVerifyEmail() {
  const qc = useQueryClient();
  return trpc.auth.verifyEmail.useMutation({ onSuccess: () => qc.invalidateQueries({ queryKey: meKey }), ...quiet });
}

export function useResendVerification() {
  return trpc.auth.resendVerification.useMutation();
}

export function useRequestPasswordReset() {
  return trpc.auth.requestPasswordReset.useMutation(quiet);
}

export function useConfirmPasswordReset() {
  return trpc.auth.confirmPasswordReset.useMutation(quiet);
}

/** Only same-site paths may be a post-login destination (no open redirect). */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/dashboard";
  if (next.startsWith("/login") || next.startsWith("/signup")) return "/dashboard";
  return next;
}
