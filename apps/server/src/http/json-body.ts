import { isUtf8 } from "node:buffer";
import express, { type RequestHandler } from "express";

/** body-parser reports an exception thrown by `verify` with the exception's `type`, else this one. */
export const INVALID_UTF8_TYPE = "entity.verify.failed";
export const TOO_DEEP_TYPE = "entity.too.deep";

/** Deeper than any real request (OpenAI tool schemas included); far below what recursion in parsers survives. */
export const MAX_JSON_DEPTH = 100;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The deepest nesting of objects and arrays in raw JSON text, stopping as soon as it passes `limit`. */
export function jsonDepthExceeds(buf: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const byte = buf[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * CONTRACT 7b, checked on the raw bytes before parsing:
 * - invalid UTF-8 is a 4xx (body-parser would silently turn it into U+FFFD replacement characters);
 * - absurd nesting is a 4xx (JSON.stringify, validators and body walkers recurse, and would overflow the stack: a 500).
 * Both checks are linear and cheap next to JSON.parse itself.
 */
function checkRawJson(_req: unknown, _res: unknown, buf: Buffer): void {
  if (!isUtf8(buf)) throw new Error("The request body is not valid UTF-8.");
  if (jsonDepthExceeds(buf, MAX_JSON_DEPTH)) throw Object.assign(new Error("The request body is nested too deeply."), { type: TOO_DEEP_TYPE });
}

/** The one JSON body parser of the app: strict (objects and arrays only), size-limited, UTF-8 and depth checked. */
export function jsonParser(limitBytes: number): RequestHandler {
  return express.json({ limit: limitBytes, strict: true, verify: checkRawJson });
}
