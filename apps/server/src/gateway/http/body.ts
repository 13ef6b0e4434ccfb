import type { RequestHandler } from "express";
import multer from "multer";
import { AppError } from "@gw/shared";
import { isPlainJson, jsonParser } from "../../http/json-body";

const unsupportedMedia = (allowed: string) =>
  new AppError("unsupported_media_type", `Unsupported Content-Type: send ${allowed}.`);

/** JSON bodies up to the configured limit (413 above it); anything but JSON is 415. */
export function jsonBody(limitBytes: number): RequestHandler[] {
  return [
    (req, _res, next) => {
      if (!isPlainJson(req.headers["content-type"]) && !req.is("application/json")) throw unsupportedMedia("application/json");
      next();
    },
    jsonParser(limitBytes),
  ];
}

/** 25 MB, 200 KB, 900 bytes: the limit as configured, never rounded down to "0 MB". */
function sizeText(bytes: number): string {
  const MB = 1024 * 1024;
  if (bytes >= MB && bytes % MB === 0) return `${bytes / MB} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

function multerError(err: unknown, maxBytes: number, fieldLimitBytes: number): AppError {
  if (err instanceof multer.MulterError) {
    if (err.code === "LIMIT_FILE_SIZE") {
      return new AppError("payload_too_large", `The audio file is larger than ${sizeText(maxBytes)}.`);
    }
    // a form field over the body limit is an oversized body, as the same field in JSON is
    if (err.code === "LIMIT_FIELD_VALUE") {
      return new AppError("payload_too_large", `The field '${err.field ?? "body"}' is larger than ${sizeText(fieldLimitBytes)}.`);
    }
    if (err.code === "LIMIT_UNEXPECTED_FILE") return new AppError("invalid_parameter", `Invalid parameter '${err.field ?? "file"}': only one 'audio' file is accepted.`);
    return new AppError("invalid_parameter", `Invalid parameter '${err.field ?? "body"}': ${err.message.toLowerCase()}.`);
  }
  return new AppError("invalid_parameter", "Invalid parameter 'body': malformed multipart/form-data.");
}

/** The task endpoint takes JSON, or multipart/form-data with one `audio` file (SPEC 4.1). */
export function jsonOrMultipartBody(jsonLimitBytes: number, audioLimitBytes: number): RequestHandler[] {
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: audioLimitBytes, files: 1, fields: 32, fieldSize: jsonLimitBytes, parts: 40 },
  }).single("audio");
  const json = jsonParser(jsonLimitBytes);
  return [
    (req, res, next) => {
      if (req.is("multipart/form-data")) {
        upload(req, res, (err: unknown) => next(err === undefined ? undefined : multerError(err, audioLimitBytes, jsonLimitBytes)));
        return;
      }
      if (req.is("application/json")) {
        json(req, res, next);
        return;
      }
      throw unsupportedMedia("application/json or multipart/form-data");
    },
  ];
}
