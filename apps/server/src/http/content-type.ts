import type { RequestHandler } from "express";

/**
 * A media type is case-insensitive (RFC 9110 8.3.1): `Application/JSON` is JSON. The REST and tRPC adapters compare
 * the header case-sensitively, so its type/subtype is put in lower case first (parameters such as charset are kept).
 */
export const lowerCaseMediaType: RequestHandler = (req, _res, next) => {
  const type = req.headers["content-type"];
  if (type !== undefined && /[A-Z]/.test(type)) req.headers["content-type"] = type.replace(/^[^;]*/, (media) => media.toLowerCase());
  next();
};
