import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";
import { ApiError, normalizeError, sessionLossCode } from "./lib/api-error";
import { notifySessionLost } from "./lib/session-events";

function reportSessionLoss(err: unknown, meta: Record<string, unknown> | undefined): void {
  if (meta?.ignoreSessionLoss) return;
  const code = sessionLossCode(err);
  if (code) notifySessionLost(code);
}

function isClientError(raw: unknown): boolean {
  const err = normalizeError(raw);
  return err instanceof ApiError && err.status >= 400 && err.status < 500;
}

/** One client for the app: any 401 from a protected call ends the session in the UI (login, then back). */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({ onError: (err, query) => reportSessionLoss(err, query.meta) }),
    mutationCache: new MutationCache({ onError: (err, _v, _c, mutation) => reportSessionLoss(err, mutation.meta) }),
    defaultOptions: {
      queries: {
        // 4xx answers won't change on retry; network blips and 5xx get two more tries.
        retry: (count, err) => count < 2 && !isClientError(err),
        // Pages show fresh numbers on every visit (balance, usage); cached data renders meanwhile.
        refetchOnWindowFocus: true,
        staleTime: 0,
      },
    },
  });
}
