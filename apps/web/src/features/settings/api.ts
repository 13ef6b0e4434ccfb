import { useQueryClient } from "@tanstack/react-query";
import { trpc } from "../../trpc";
import { meKey, resetSession } from "../auth/api";

export function useUpdateProfile() {
  const qc = useQueryClient();
  return trpc.auth.updateMe.useMutation({ onSuccess: ({ user }) => qc.setQueryData(meKey, user) });
}

export function useChangePassword() {
  return trpc.auth.changePassword.useMutation();
}

export function useDeleteAccount() {
  const qc = useQueryClient();
  return trpc.auth.deleteAccount.useMutation({
    onSuccess: () => resetSession(qc, null, "account_deleted"),
    // The account is gone either way once this answers; the settings page handles its own errors.
    meta: { ignoreSessionLoss: true },
  });
}
