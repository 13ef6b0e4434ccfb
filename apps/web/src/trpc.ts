import { httpBatchLink } from "@trpc/client";
import { createTRPCReact } from "@trpc/react-query";
import type { AppRouter } from "@gw/api";

/** The one typed client of the dashboard: procedures of packages/api/src/root.ts at /api/trpc (no transformer). */
export const trpc = createTRPCReact<AppRouter>();

export function createTrpcClient() {
  return trpc.createClient({
    links: [
      httpBatchLink({
        url: "/api/trpc",
        fetch: (url, options) => fetch(url, { ...options, credentials: "same-origin" }),
      }),
    ],
  });
}
