import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@gw/api/root";
import { trpc } from "../../trpc";

type Outputs = inferRouterOutputs<AppRouter>["keys"];
export type ApiKey = Outputs["list"]["keys"][number];
export type CreatedKey = Outputs["create"];

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
