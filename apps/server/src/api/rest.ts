import type { Request, RequestHandler, Response } from "express";
import { createApiContext, type ApiContext, toApiError, appRouter, lockBodyCoercion } from "@gw/api";
import { createOpenApiNodeHttpHandler } from "trpc-to-openapi";
import type { AppContext } from "../context";
import { replaceNextErrorBody, writeRestError } from "./rest-errors";

/**
 * The REST face of the routers (trpc-to-openapi): each procedure's `meta.openapi` path under /api. Unknown
 * paths fall through to the app's 404.
 */
export function restHandler(app: AppContext): RequestHandler {
  const debug = app.config.errorDebug;
  lockBodyCoercion(appRouter);
  const handler = createOpenApiNodeHttpHandler<typeof appRouter, Request, Response>({
    router: appRouter,
    createContext: ({ req, res }): ApiContext => createApiContext(app, req, res),
    // Procedures choose their success status (e.g. 201) through meta; errors are written in onError below.
    responseMeta: ({ ctx, errors }) => (errors.length === 0 && ctx ? { status: ctx.res.statusCode } : {}),
    onError: ({ error, req, input }) => {
      const appError = toApiError(error, input);
      if (appError.code === "internal_error") {
        app.logger.error({ err: error.cause ?? error, path: req.path }, "unhandled error in REST route");
      }
      const res = req.res;
      if (res) replaceNextErrorBody(res, () => writeRestError(res, appError, req, debug));
    },
  });
  return (req, res, next) => {
    // HEAD is GET without a body (RFC 9110), as Express does for its own routes; Node already drops the body
    // of an answer to a HEAD request, so the adapter only has to route it as a GET.
    if (req.method === "HEAD") req.method = "GET";
    keepEmptyQueryValues(req);
    handler(req, res, next).catch(next);
  };
}

/**
 * The adapter drops a query parameter whose value is empty (`?limit=`), so the procedure saw it as absent and used
 * its default, where the document's pattern refuses it. Wrapped in an array (whose single value the adapter hands on
 * as is), the empty value reaches the input schema, which refuses it naming the parameter; unknown ones stay ignored.
 */
function keepEmptyQueryValues(req: Request): void {
  const query = req.query as Record<string, unknown>;
  if (!Object.values(query).includes("")) return;
  const kept = Object.fromEntries(Object.entries(query).map(([key, value]) => [key, value === "" ? [""] : value]));
  Object.defineProperty(req, "query", { value: kept, configurable: true, writable: true });
}
