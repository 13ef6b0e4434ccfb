import type { Request, RequestHandler, Response } from "express";
import { createApiContext, type ApiContext } from "@gw/api/trpc";
import { toApiError } from "@gw/api/errors";
import { appRouter } from "@gw/api/root";
import { lockBodyCoercion } from "@gw/api/strict-body-types";
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
    handler(req, res, next).catch(next);
  };
}
