import type { TRPCError } from "@trpc/server";
import { databaseOutage } from "@gw/db";
import { AppError, validationError } from "@gw/shared";
import { z } from "zod";

/** Input validation failure → 400 naming the parameter (the wording is shared with the gateway routes). */
export function appErrorFromZod(error: z.core.$ZodError, input: unknown): AppError {
  return validationError(error, input);
}

/** Maps whatever a tRPC procedure or adapter threw to the one domain error type. */
export function toApiError(error: TRPCError, input?: unknown): AppError {
  const cause = error.cause;
  if (cause instanceof AppError) return cause;
  // the adapter's JSON.parse of a malformed body (or `?input=`) reaches here as BAD_REQUEST with its SyntaxError
  if (cause instanceof SyntaxError) return new AppError("invalid_json", "The request body is not valid JSON.");
  const outage = databaseOutage(cause);
  if (outage) return outage;
  if (cause instanceof z.core.$ZodError && error.code === "BAD_REQUEST") return appErrorFromZod(cause, input);
  switch (error.code) {
    case "PARSE_ERROR":
      return new AppError("invalid_json", "The request body is not valid JSON.");
    case "PAYLOAD_TOO_LARGE":
      return new AppError("payload_too_large", "The request body is too large.");
    case "UNSUPPORTED_MEDIA_TYPE":
      return new AppError("unsupported_media_type", "Unsupported Content-Type: send application/json.");
    case "NOT_FOUND":
      return new AppError("not_found", "No such route.");
    case "METHOD_NOT_SUPPORTED":
      return new AppError("method_not_allowed", "Method not allowed for this route.");
    case "BAD_REQUEST":
      return new AppError("invalid_parameter", error.message);
    default:
      return new AppError("internal_error", "An internal error occurred. Please try again later.");
  }
}

