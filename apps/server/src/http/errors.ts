import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import { databaseOutage } from "@gw/db";
import { AppError, nestedErrorBody, toAppError, type NestedErrorBody } from "@gw/shared";
import type { Logger } from "pino";
import { INVALID_UTF8_TYPE, MAX_JSON_DEPTH, TOO_DEEP_TYPE } from "./json-body";

/** Writes an AppError in the SPEC 7.1 nested form, with Retry-After and rate-limit headers when present. */
export function sendError(res: Response, err: AppError, req?: Request, opts: { debug?: boolean } = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // the access log line and the gateway series name the error answered
  res.locals.errorCode = err.code;
  if (err.extras.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(err.extras.retryAfterSeconds));
  for (const [name, value] of Object.entries(err.extras.headers ?? {})) res.setHeader(name, value);
  const body: NestedErrorBody = nestedErrorBody(err);
  if (opts.debug && req && err.type === "authentication_error") {
    body.debug = { timestamp: new Date().toISOString(), ip: req.ip ?? "", user_agent: req.get("user-agent") ?? "" };
  }
  // a route that speaks another API's error envelope (Anthropic's on /v1/messages) sets its own writer
  const ownShape = (res.locals as { errorBody?: (err: AppError) => unknown }).errorBody;
  res.status(err.status).json(ownShape ? ownShape(err) : body);
}

function isClientHttpError(err: object): boolean {
  const { expose, status } = err as { expose?: unknown; status?: unknown };
  return expose === true && typeof status === "number" && status >= 400 && status < 500;
}

/** Maps body-parser failures (bad JSON, too large, wrong charset) to spec errors, never a 500. */
export function fromBodyParser(err: unknown): AppError | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  // A body that cannot be read at all (e.g. corrupt gzip under Content-Encoding) comes as an exposable 4xx
  // http-error without a body-parser type: the client's fault, so a 400 rather than a 500.
  if (!("type" in err)) return isClientHttpError(err) ? new AppError("invalid_parameter", "Invalid parameter 'body': the request body could not be read (corrupt or mislabelled Content-Encoding?).") : undefined;
  switch ((err as { type: unknown }).type) {
    case "entity.parse.failed":
      return new AppError("invalid_json", "The request body is not valid JSON.");
    case INVALID_UTF8_TYPE:
      return new AppError("invalid_json", "The request body is not valid UTF-8 encoded JSON.");
    case TOO_DEEP_TYPE:
      return new AppError("invalid_parameter", `Invalid parameter 'body': objects and arrays must not nest deeper than ${MAX_JSON_DEPTH} levels.`);
    case "entity.too.large":
      return new AppError("payload_too_large", "The request body is too large.");
    case "charset.unsupported":
    case "encoding.unsupported":
      return new AppError("invalid_parameter", "Invalid parameter 'body': unsupported charset or encoding.");
    case "request.aborted":
      return new AppError("invalid_parameter", "Invalid parameter 'body': the request was aborted.");
    default:
      return undefined;
  }
}

/** The router's own 400 for a path parameter that is not valid percent-encoding (`:id` = `%E0%A4%A`). */
const fromPathDecoding = (err: unknown): AppError | undefined =>
  (err instanceof URIError ? new AppError("invalid_parameter", "Invalid parameter 'path': malformed percent-encoding.") : undefined);

export function errorHandler(logger: Logger, opts: { debug: boolean }): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const appError = fromBodyParser(err) ?? fromPathDecoding(err) ?? databaseOutage(err) ?? toAppError(err);
    if (appError.code === "internal_error") {
      logger.error({ err, requestId: res.locals.requestId, path: req.path }, "unhandled error");
    } else if (!(err instanceof AppError) && appError.code === "service_unavailable") {
      logger.warn({ err: (err as Error).message, requestId: res.locals.requestId, path: req.path }, "database unreachable");
    }
    sendError(res, appError, req, opts);
  };
}

export const notFound: RequestHandler = (req, _res, next) => {
  next(new AppError("not_found", `No route for ${req.method} ${req.path}.`));
};
