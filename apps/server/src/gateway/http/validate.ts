import { AppError, validationError } from "@gw/shared";
import type { z } from "zod";

/** Parses with the schema or throws the spec's 400. */
export function parseOrThrow<S extends z.ZodType>(schema: S, data: unknown): z.output<S> {
  const result = schema.safeParse(data);
  if (!result.success) throw validationError(result.error, data);
  return result.data;
}

export function requireObject(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new AppError("invalid_parameter", "Invalid parameter 'body': the request body must be a JSON object.");
  }
  return body as Record<string, unknown>;
}
