import type { ErrorRequestHandler, RequestHandler } from "express";
import { createExpressMiddleware } from "@trpc/server/adapters/express";
import { createApiContext, trpcErrorShape, toApiError, appRouter } from "@gw/api";
import { AppError } from "@gw/shared";
import type { AppContext } from "../context";
import { fromBodyParser } from "../http/errors";
import { jsonParser } from "../http/json-body";

/**
 * The dashboard's tRPC endpoint (/api/trpc): same procedures, tRPC wire format, HTTP status from the spec code.
 * Bodies go through the app's one JSON parser first, so CONTRACT 7b holds here as on the REST routes: the
 * adapter's own reader decodes bytes that are not UTF-8 to U+FFFD and stored them.
 */
export function trpcEndpoint(app: AppContext): RequestHandler[] {
  const adapter = createExpressMiddleware({
    router: appRouter,
    createContext: ({ req, res }) => createApiContext(app, req, res),
    maxBodySize: app.config.jsonBodyLimitBytes,
    responseMeta: ({ errors }) => {
      const first = errors[0];
      if (!first) return {};
      // a 503 of a database outage or a 429 says when to try again, and a 429 where the caller stands
      // (X-RateLimit-*), as on the REST routes
      const error = toApiError(first);
      const retryAfter = error.extras.retryAfterSeconds;
      const headers = { ...error.extras.headers, ...(retryAfter === undefined ? {} : { "retry-after": String(retryAfter) }) };
      return { status: error.status, headers };
    },
    onError: ({ error, path }) => {
      if (toApiError(error).code === "internal_error") app.logger.error({ err: error.cause ?? error, path }, "unhandled error in tRPC procedure");
    },
  });
  return [trpcMethodsOnly, jsonParser(app.config.jsonBodyLimitBytes), trpcBodyError as unknown as RequestHandler, adapter];
}

/**
 * tRPC answers GET (queries) and POST (mutations); any other method gets the app's JSON 404, as on the other routes
 * (the adapter answered DELETE and OPTIONS with a 415 labelled text/plain, PUT with a code outside CONTRACT 1).
 */
const trpcMethodsOnly: RequestHandler = (req, _res, next) => {
  if (req.method === "GET" || req.method === "HEAD" || req.method === "POST") next();
  else next(new AppError("not_found", `No route for ${req.method} ${req.baseUrl}${req.path}.`));
};

/** A body the parser refused (bad JSON or UTF-8, too large, too deep, other charset), in tRPC's error shape. */
const trpcBodyError: ErrorRequestHandler = (err, req, res, next) => {
  const error = fromBodyParser(err);
  if (!error) {
    next(err);
    return;
  }
  const path = req.query.batch === undefined ? req.path.slice(1) : undefined;
  res.status(error.status).json({ error: trpcErrorShape(error, path) });
};
