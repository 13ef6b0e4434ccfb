import type { RequestHandler } from "express";
import { AppError, invalidParameter, textFieldError } from "@gw/shared";

/** Why a parsed request body is not a JSON object of plain text (no NUL, no unpaired surrogate: CONTRACT 7b), or undefined. */
export function objectBodyError(body: unknown): AppError | undefined {
  if (body !== undefined && (typeof body !== "object" || body === null || Array.isArray(body))) {
    return invalidParameter("body", "must be a JSON object");
  }
  return textFieldError(body);
}

/**
 * REST bodies are JSON objects. A POST without any body (logout, POST /api/example) counts as an empty object
 * rather than a missing Content-Type; an array or scalar is refused here, as the adapter would spread it into
 * an object and misreport it.
 */
export const objectBody: RequestHandler = (req, _res, next) => {
  if (!["POST", "PUT", "PATCH"].includes(req.method)) return next();
  const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
  if (!hasBody && !req.headers["content-type"]) {
    req.headers["content-type"] = "application/json";
    req.body = {};
  }
  next(objectBodyError(req.body));
};

/** A body that is there and is not JSON: 415, as the REST adapter answers it. */
export function unsupportedBodyType(req: Parameters<RequestHandler>[0]): AppError | undefined {
  const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
  return hasBody && !req.is("application/json") ? new AppError("unsupported_media_type", "Unsupported Content-Type: send application/json.") : undefined;
}
