import type { RequestHandler } from "express";
import { createExpressMiddleware } from "@trpc/server/adapters/express";
import { createApiContext } from "@gw/api/trpc";
import { toApiError } from "@gw/api/errors";
import { appRouter } from "@gw/api/root";
import type { AppContext } from "../context";

/** The dashboard's tRPC endpoint (/api/trpc): same procedures, tRPC wire format, HTTP status from the spec code. */
export function trpcEndpoint(app: AppContext): RequestHandler {
  return createExpressMiddleware({
    router: appRouter,
    createContext: ({ req, res }) => createApiContext(app, req, res),
    maxBodySize: app.config.jsonBodyLimitBytes,
    responseMeta: ({ errors }) => {
      const first = errors[0];
      return first ? { status: toApiError(first).status } : {};
    },
    onError: ({ error, path }) => {
      if (toApiError(error).code === "internal_error") app.logger.error({ err: error.cause ?? error, path }, "unhandled error in tRPC procedure");
    },
  });
}
