import type { Request, RequestHandler } from "express";
import multer from "multer";
import { AppError, invalidParameter } from "@gw/shared";
import { isPlainJson, jsonParser } from "../../http/json-body";

const unsupportedMedia = (allowed: string) =>
  new AppError("unsupported_media_type", `Unsupported Content-Type: send ${allowed}.`);

const durationText = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** Has a `Content-Length` body arrived whole, waiting in the request's buffer to be read? */
function bodyArrived(req: Request): boolean {
  const declared = req.headers["content-length"];
  return declared !== undefined && req.readableLength >= Number(declared);
}

/**
 * Bounds the reading of a body by `read`: a client that sends its headers and then stalls the body, or trickles it a
 * byte at a time, would keep the request, and the account's concurrency slot taken before the body is read, until
 * Node's 300 s request timeout (every other request of the account 429 meanwhile). After `idleMs` without a byte, or
 * `totalMs` after the reading began however the bytes arrive, the request ends with 408 `request_timeout` and the
 * connection is closed, the rest of the body unread. Only the reading is timed: once the body is in, the upstream
 * call waits as long as it does.
 */
export function bodyIdleTimeout(idleMs: number, read: RequestHandler, totalMs = Infinity): RequestHandler {
  return (req, res, next) => {
    // Usually the whole body is in by now (it came with the headers, or while the key was checked): nothing can stall,
    // so no timer or listener is spent on it.
    if (req.complete || bodyArrived(req)) {
      read(req, res, next);
      return;
    }
    let settled = false;
    const onData = () => timer.refresh();
    const done = (err?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(deadline);
      req.removeListener("data", onData);
      next(err);
    };
    const timeOut = (why: string) => {
      res.setHeader("Connection", "close");
      done(new AppError("request_timeout", `The request body was not received in time: ${why}.`));
    };
    const timer = setTimeout(() => timeOut(`nothing arrived for ${durationText(idleMs)}`), idleMs);
    const deadline = Number.isFinite(totalMs) ? setTimeout(() => timeOut(`it took longer than ${durationText(totalMs)}`), totalMs) : undefined;
    req.on("data", onData);
    try {
      read(req, res, done);
    } catch (err) {
      done(err);
    }
  };
}

/** JSON bodies up to the configured limit (413 above it); anything but JSON is 415. */
export function jsonBody(limitBytes: number, idleMs: number, totalMs: number): RequestHandler[] {
  return [
    (req, _res, next) => {
      if (!isPlainJson(req.headers["content-type"]) && !req.is("application/json")) throw unsupportedMedia("application/json");
      next();
    },
    bodyIdleTimeout(idleMs, jsonParser(limitBytes), totalMs),
  ];
}

/** 25 MB, 200 KB, 900 bytes: the limit as configured, never rounded down to "0 MB". */
function sizeText(bytes: number): string {
  const MB = 1024 * 1024;
  if (bytes >= MB && bytes % MB === 0) return `${bytes / MB} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

function multerError(err: unknown, maxBytes: number, fieldLimitBytes: number, fileField = "audio"): AppError {
  if (err instanceof multer.MulterError) {
    if (err.code === "LIMIT_FILE_SIZE") {
      return new AppError("payload_too_large", `The audio file is larger than ${sizeText(maxBytes)}.`);
    }
    // a form field over the body limit is an oversized body, as the same field in JSON is
    if (err.code === "LIMIT_FIELD_VALUE") {
      return new AppError("payload_too_large", `The field '${err.field ?? "body"}' is larger than ${sizeText(fieldLimitBytes)}.`);
    }
    // a second file, under any field name: the parameter concerned is the one file the form may carry
    if (err.code === "LIMIT_FILE_COUNT") return new AppError("invalid_parameter", `Invalid parameter '${fileField}': only one file is accepted.`);
    // a file under another field name: the audio file goes in the field 'audio'
    if (err.code === "LIMIT_UNEXPECTED_FILE") return new AppError("invalid_parameter", `Invalid parameter '${err.field ?? "file"}': files are not accepted here; send the audio file in the field '${fileField}'.`);
    return new AppError("invalid_parameter", `Invalid parameter '${err.field ?? "body"}': ${err.message.toLowerCase()}.`);
  }
  return new AppError("invalid_parameter", "Invalid parameter 'body': malformed multipart/form-data.");
}

/**
 * Each form field is one piece of UTF-8 text, checked in one pass over the fields:
 * - multer reads bracketed names (`messages[0][role]`, `prompt[]`) into arrays and objects, and a name sent twice
 *   into an array: such a field is refused naming it before anything walks its value, since `messages[4294967294]`
 *   makes a sparse array of four billion slots that any loop over it (a check, a fingerprint) would block the server
 *   on for minutes;
 * - busboy decodes fields leniently, turning bytes that are not UTF-8 into U+FFFD, and keeps no trace of the original
 *   bytes; so a replacement character in a field is read as the mark of such bytes, and refused as a JSON body that is
 *   not UTF-8 is (CONTRACT 7b) rather than sent upstream garbled and charged.
 */
function formFieldError(body: unknown, listFields: readonly string[] = []): AppError | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  for (const [name, value] of Object.entries(body)) {
    // a list field (`name[]` parts) holds short texts; anything else there is refused by the route's schema
    if (listFields.includes(name) && Array.isArray(value) && value.length <= 8) {
      if (value.some((v) => typeof v === "string" && v.includes("\uFFFD"))) return invalidParameter(name, "must be UTF-8 text");
      continue;
    }
    if (typeof value !== "string") return invalidParameter(name, "must be sent once, as one text field (objects and arrays as a JSON string)");
    if (value.includes("\uFFFD")) return invalidParameter(name, "must be UTF-8 text");
  }
  return undefined;
}

/**
 * busboy reads a part without a filename as a text field (curl's `-F audio=<clip.wav` sends one), decoding its
 * bytes as UTF-8, so the audio cannot be recovered: the client is told to send it as a file.
 */
function audioAsFieldError(body: unknown, fileField = "audio"): AppError | undefined {
  if (typeof body !== "object" || body === null || !(fileField in body)) return undefined;
  return invalidParameter(fileField, `must be a file upload, a part with a filename (curl -F ${fileField}=@clip.wav), not a text field`);
}

/**
 * A multipart/form-data body only (OpenAI's audio uploads): one file in `fileField`, text fields, and the list
 * fields named (sent as `name[]` parts); anything but a form is 415.
 */
export function multipartFileBody(fileField: string, listFields: readonly string[], opts: { fieldLimitBytes: number; fileLimitBytes: number; idleMs: number; totalMs: number }): RequestHandler[] {
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: opts.fileLimitBytes, files: 1, fields: 32, fieldSize: opts.fieldLimitBytes, parts: 40 },
  }).single(fileField);
  return [
    bodyIdleTimeout(opts.idleMs, (req, res, next) => {
      if (!req.is("multipart/form-data")) throw unsupportedMedia("multipart/form-data");
      upload(req, res, (err: unknown) => next(err === undefined
        ? audioAsFieldError(req.body, fileField) ?? formFieldError(req.body, listFields)
        : multerError(err, opts.fileLimitBytes, opts.fieldLimitBytes, fileField)));
    }, opts.totalMs),
  ];
}

/** The task endpoint takes JSON, or multipart/form-data with one `audio` file (SPEC 4.1). */
export function jsonOrMultipartBody(jsonLimitBytes: number, audioLimitBytes: number, idleMs: number, totalMs: number): RequestHandler[] {
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: audioLimitBytes, files: 1, fields: 32, fieldSize: jsonLimitBytes, parts: 40 },
  }).single("audio");
  const json = jsonParser(jsonLimitBytes);
  return [
    bodyIdleTimeout(idleMs, (req, res, next) => {
      if (req.is("multipart/form-data")) {
        upload(req, res, (err: unknown) => next(err === undefined ? audioAsFieldError(req.body) ?? formFieldError(req.body) : multerError(err, audioLimitBytes, jsonLimitBytes)));
        return;
      }
      if (req.is("application/json")) {
        json(req, res, next);
        return;
      }
      throw unsupportedMedia("application/json or multipart/form-data");
    }, totalMs),
  ];
}
