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
      if (!first) return {};
      // a 503 of a database outage says when to try again, as on the REST routes
      const error = toApiError(first);
      const retryAfter = error.extras.retryAfterSeconds;
      return retryAfter === undefined ? { status: error.status } : { status: error.status, headers: { "retry-after": String(retryAfter) } };
    },
    onError: ({ error, path }) => {
      if (toApiError(error).code === "internal_error") app.logger.error({ err: error.cause ?? error, path }, "unhandled error in tRPC procedure");
    },
  });
}
