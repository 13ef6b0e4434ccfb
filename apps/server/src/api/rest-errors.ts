import type { ErrorRequestHandler, Request, Response } from "express";
import { databaseOutage } from "@gw/db";
import { isAppError, type AppError, type StatusErrorBody } from "@gw/shared";
import { sendError } from "../http/errors";

/**
 * Writes an error of a REST route: the status form for service_unavailable (CONTRACT 1), else the nested form
 * through the app's one error writer.
 */
export function writeRestError(res: Response, err: AppError, req: Request, debug: boolean): void {
  if (err.code !== "service_unavailable") {
    sendError(res, err, req, { debug });
    return;
  }
  if (res.headersSent) {
    res.end();
    return;
  }
  const body: StatusErrorBody = { status: "error", message: err.message, error_code: err.code };
  res.setHeader("Cache-Control", "no-store");
  if (err.extras.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(err.extras.retryAfterSeconds));
  res.status(err.status).json(body);
}

/**
 * For the /api REST routes Express serves itself (the webhook, DELETE /api/auth/me): a 503 service_unavailable
 * (database unreachable, payments not configured) in the status form, as the generated routes answer it; other
 * errors go on to the app's error handler.
 */
export function statusFormUnavailable(debug: boolean): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    const error = isAppError(err) ? err : databaseOutage(err);
    if (error?.code !== "service_unavailable") {
      next(err);
      return;
    }
    writeRestError(res, error, req, debug);
  };
}

/**
 * trpc-to-openapi always writes its own error body ({message, code, issues}) and offers no hook to replace it
 * (mcampa/trpc-to-openapi#168). From its onError hook we take over the one `res.end` call it is about to make and
 * write the spec's body instead; status and headers are ours too.
 */
export function replaceNextErrorBody(res: Response, write: () => void): void {
  const originalEnd = res.end.bind(res);
  res.end = function endWithSpecBody(): Response {
    res.end = originalEnd;
    write();
    return res;
  } as Response["end"];
}
