import { useInfiniteQuery } from "@tanstack/react-query";
import { getQueryKey } from "@trpc/react-query";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@gw/api";
import { trpc } from "../../trpc";

// The operator console (CONTRACT 12). The server refuses every admin call from a non-admin; the dashboard only
// hides the section (useAdminAccess).

type Outputs = inferRouterOutputs<AppRouter>["admin"];
type Inputs = inferRouterInputs<AppRouter>["admin"];
export type AdminUserDetail = Outputs["user"];
export type AuditEntry = Outputs["audit"]["entries"][number];
export type UserStatusFilter = NonNullable<Exclude<Inputs["users"], void | undefined>["status"]>;

/** Whether the signed-in account is an admin (decides whether the Admin section shows); asked only when signed in. */
export function useAdminAccess(signedIn = true) {
  return trpc.admin.access.useQuery(undefined, { staleTime: 60_000, enabled: signedIn, meta: { ignoreSessionLoss: true } });
}

const PAGE = 25;

/** Users, newest first, a page at a time (next_cursor). */
export function useAdminUsers(query: string, status: UserStatusFilter | "") {
  const utils = trpc.useUtils();
  const input = { query: query || undefined, status: status || undefined };
  return useInfiniteQuery({
    queryKey: [...getQueryKey(trpc.admin.users, undefined, "infinite"), input],
    queryFn: ({ pageParam }) => utils.client.admin.users.query({ ...input, limit: PAGE, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
  });
}

export const useAdminUser = (id: string) => trpc.admin.user.useQuery({ id });

/** A user's payment history (as the user's own billing page shows it). */
export function useAdminLedger(id: string) {
  const utils = trpc.useUtils();
  return useInfiniteQuery({
    queryKey: [...getQueryKey(trpc.admin.ledger, undefined, "infinite"), id],
    queryFn: ({ pageParam }) => utils.client.admin.ledger.query({ id, limit: PAGE, ...(pageParam === null ? {} : { before: pageParam }) }),
    initialPageParam: null as number | null,
    getNextPageParam: (last) => last.next_before,
  });
}

/** After a change to a user: their page, the list and the audit log are read again. */
function useAfterUserChange() {
  const utils = trpc.useUtils();
  return () => Promise.all([utils.admin.user.invalidate(), utils.admin.users.invalidate(), utils.admin.ledger.invalidate(), utils.admin.audit.invalidate()]);
}

export function useAdjustCredits() {
  const refresh = useAfterUserChange();
  return trpc.admin.credit.useMutation({ onSettled: refresh });
}

export function useSuspend() {
  const refresh = useAfterUserChange();
  return trpc.admin.suspend.useMutation({ onSettled: refresh });
}

export function useUnsuspend() {
  const refresh = useAfterUserChange();
  return trpc.admin.unsuspend.useMutation({ onSettled: refresh });
}

export function useRevokeUserKeys() {
  const refresh = useAfterUserChange();
  return trpc.admin.revokeKeys.useMutation({ onSettled: refresh });
}

export const useRedemptionCodes = () => trpc.admin.codes.useQuery({ limit: 100 });

export function useCreateCode() {
  const utils = trpc.useUtils();
  return trpc.admin.createCode.useMutation({ onSettled: () => Promise.all([utils.admin.codes.invalidate(), utils.admin.audit.invalidate()]) });
}

export function useAuditLog() {
  const utils = trpc.useUtils();
  return useInfiniteQuery({
    queryKey: getQueryKey(trpc.admin.audit, undefined, "infinite"),
    queryFn: ({ pageParam }) => utils.client.admin.audit.query({ limit: 50, ...(pageParam ? { before: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_before,
  });
}

/** Signed dollars, at most two decimals, not 0 (the server checks again); an error text or null. */
export function validateAdjustment(raw: string): string | null {
  if (!/^[+-]?\d+(\.\d{1,2})?$/.test(raw.trim())) return "Enter an amount in dollars with at most two decimals, negative to take credits back.";
  if (Number(raw) === 0) return "The amount must not be 0.";
  return null;
}

// The catalog at run time (models, plans, credit packages) and the overview.
export type CatalogModel = Outputs["models"]["models"][number];
export type ModelEdit = Omit<Inputs["updateModel"], "id" | "version">;

export const useCatalogModels = () => trpc.admin.models.useQuery();
export const usePlans = () => trpc.admin.plans.useQuery();
export const useCreditPackages = () => trpc.admin.creditPackages.useQuery();
export const useOverview = (range: { from: string; to: string }) => trpc.admin.overview.useQuery(range);

/** After a catalog edit (written or refused as stale): the catalog and the audit log are read again. */
function useAfterCatalogChange() {
  const utils = trpc.useUtils();
  return () => Promise.all([utils.admin.models.invalidate(), utils.admin.plans.invalidate(), utils.admin.creditPackages.invalidate(), utils.admin.audit.invalidate()]);
}

export function useUpdateModel() {
  const refresh = useAfterCatalogChange();
  return trpc.admin.updateModel.useMutation({ onSettled: refresh });
}

export function useSetPlans() {
  const refresh = useAfterCatalogChange();
  return trpc.admin.setPlans.useMutation({ onSettled: refresh });
}

export function useSetCreditPackages() {
  const refresh = useAfterCatalogChange();
  return trpc.admin.setCreditPackages.useMutation({ onSettled: refresh });
}

/** A JSON list typed by an admin: the parsed array, or an error text (the server checks every field again). */
export function parseJsonList(raw: string): { list: Array<Record<string, unknown>> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return { error: `Not valid JSON: ${(err as Error).message}` };
  }
  if (!Array.isArray(value) || !value.every((v) => typeof v === "object" && v !== null && !Array.isArray(v))) {
    return { error: "Enter a JSON list of objects: [{…}, {…}]." };
  }
  return { list: value as Array<Record<string, unknown>> };
}
