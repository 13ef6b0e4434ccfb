import { isUtf8 } from "node:buffer";
import express, { type Request, type RequestHandler } from "express";

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

const UTF8_BOM = "\uFEFF";
/** space, tab, line feed, carriage return */
const JSON_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** An error body-parser would have raised, so the error handler maps both alike. */
const bodyError = (type: string, message: string, status = 400) => Object.assign(new Error(message), { type, status, expose: true });

/** `charset=utf8` is UTF-8 too (a label of it in the WHATWG Encoding standard), and clients do send it. */
const isUtf8Charset = (charset: string) => charset === "utf-8" || charset === "utf8";

/** `application/json`, with no charset or UTF-8: the only content type the lean reader takes. */
export function isPlainJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const lower = contentType.toLowerCase();
  const semi = lower.indexOf(";");
  if (semi === -1) return lower.trim() === "application/json";
  if (lower.slice(0, semi).trim() !== "application/json") return false;
  const params = lower.slice(semi + 1).trim();
  return params === "" || params === "charset=utf-8" || params === 'charset="utf-8"' || params === "charset=utf8" || params === 'charset="utf8"';
}

/**
 * Reads and parses a plain (unencoded, UTF-8) JSON body in one pass with the same rules and errors as the
 * body-parser configuration below; returns false for anything else (compressed bodies, other charsets, other
 * types), which body-parser then handles.
 */
function readPlainJson(req: Request, limitBytes: number, next: (err?: unknown) => void): boolean {
  const headers = req.headers;
  const encoding = headers["content-encoding"];
  if ((encoding !== undefined && encoding.toLowerCase() !== "identity") || !isPlainJson(headers["content-type"]) || (req.complete && !req.readable)) return false;
  const declared = headers["content-length"];
  if (declared === undefined && headers["transfer-encoding"] === undefined) {
    req.body = undefined;
    next();
    return true;
  }
  if (declared !== undefined && Number(declared) > limitBytes) {
    next(bodyError("entity.too.large", "request entity too large", 413));
    req.resume();
    return true;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  let done = false;
  const finish = (err?: unknown) => {
    if (done) return;
    done = true;
    req.removeListener("data", onData);
    req.removeListener("end", onEnd);
    req.removeListener("aborted", onAborted);
    req.removeListener("error", finish);
    if (err !== undefined) req.resume();
    next(err);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limitBytes) finish(bodyError("entity.too.large", "request entity too large", 413));
    else chunks.push(chunk);
  };
  const onAborted = () => finish(bodyError("request.aborted", "request aborted"));
  const onEnd = () => {
    const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received);
    try {
      checkRawJson(req, undefined, buf);
    } catch (err) {
      finish(err instanceof Error && "type" in err ? err : bodyError(INVALID_UTF8_TYPE, (err as Error).message));
      return;
    }
    let text = buf.toString("utf8");
    if (text.startsWith(UTF8_BOM)) text = text.slice(1);
    try {
      req.body = parseStrict(text);
    } catch {
      finish(bodyError("entity.parse.failed", "invalid JSON"));
      return;
    }
    finish();
  };
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("aborted", onAborted);
  req.on("error", finish);
  return true;
}

/** body-parser's `strict`: empty is `{}`, anything but an object or array at the top is a syntax error. */
function parseStrict(text: string): unknown {
  if (text.length === 0) return {};
  let i = 0;
  while (i < text.length && JSON_WHITESPACE.has(text.charCodeAt(i))) i++;
  const first = text[i];
  if (first !== "{" && first !== "[") throw new SyntaxError("strict JSON: an object or array is expected");
  return JSON.parse(text) as unknown;
}

/** The `charset` parameter of a Content-Type, lower case and unquoted; undefined without one. */
function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? "");
  return match ? (match[1] ?? match[2] ?? "").toLowerCase() : undefined;
}

/**
 * The one JSON body parser of the app: strict (objects and arrays only), size-limited, UTF-8 and depth checked.
 * JSON between systems is UTF-8 (RFC 8259 8.1), and the checks above read the raw bytes as UTF-8: a body declared
 * in another charset (body-parser would decode UTF-16 and UTF-32) is refused as an unsupported one, unread; other
 * types pass to body-parser, which leaves them alone.
 */
export function jsonParser(limitBytes: number): RequestHandler {
  const general = express.json({ limit: limitBytes, strict: true, verify: checkRawJson });
  return (req, res, next) => {
    if (readPlainJson(req, limitBytes, next)) return;
    const contentType = req.headers["content-type"];
    const charset = charsetOf(contentType);
    if (charset !== undefined && !isUtf8Charset(charset) && req.is("application/json")) {
      next(bodyError("charset.unsupported", `unsupported charset "${charset.toUpperCase()}"`, 415));
      return;
    }
    // body-parser knows UTF-8 only as `utf-8`
    if (charset === "utf8" && contentType !== undefined) req.headers["content-type"] = contentType.replace(/charset\s*=\s*"?utf8"?/i, "charset=utf-8");
    general(req, res, next);
  };
}
