import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@gw/api";
import { trpc } from "../../trpc";

type Outputs = inferRouterOutputs<AppRouter>["keys"];
export type ApiKey = Outputs["list"]["keys"][number];
export type CreatedKey = Outputs["create"];
export type RotatedKey = Outputs["rotate"];
/** The controls a create or an update sets (CONTRACT 10); null clears one. */
export type KeyControlsInput = Omit<inferRouterInputs<AppRouter>["keys"]["update"], "id">;

export function useKeys() {
  // last_used and usage_count move while the page is open (CONTRACT 3: visible within 5 s).
  return trpc.keys.list.useQuery(undefined, { refetchInterval: 15_000 });
}

export function useCreateKey() {
  const utils = trpc.useUtils();
  return trpc.keys.create.useMutation({ onSuccess: () => utils.keys.list.invalidate() });
}

export function useRevokeKey() {
  const utils = trpc.useUtils();
  return trpc.keys.revoke.useMutation({ onSettled: () => utils.keys.list.invalidate() });
}

export function useUpdateKey() {
  const utils = trpc.useUtils();
  return trpc.keys.update.useMutation({ onSuccess: () => utils.keys.list.invalidate() });
}

export function useRotateKey() {
  const utils = trpc.useUtils();
  return trpc.keys.rotate.useMutation({ onSettled: () => utils.keys.list.invalidate() });
}
