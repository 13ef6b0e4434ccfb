import { isUtf8 } from "node:buffer";
import express, { type RequestHandler } from "express";

/** body-parser reports an exception thrown by `verify` with this type; errors.ts maps it to a 400. */
export const INVALID_UTF8_TYPE = "entity.verify.failed";

/**
 * CONTRACT 7b: invalid UTF-8 is a 4xx. body-parser would decode it silently into U+FFFD replacement characters,
 * so the raw bytes are checked before parsing (simdutf-backed, cheap even at the 1 MB body limit).
 */
function rejectInvalidUtf8(_req: unknown, _res: unknown, buf: Buffer): void {
  if (!isUtf8(buf)) throw new Error("The request body is not valid UTF-8.");
}

/** The one JSON body parser of the app: strict (objects and arrays only), size-limited, UTF-8 checked. */
export function jsonParser(limitBytes: number): RequestHandler {
  return express.json({ limit: limitBytes, strict: true, verify: rejectInvalidUtf8 });
}
