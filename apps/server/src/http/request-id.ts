import type { RequestHandler } from "express";
import { newId } from "@gw/shared";

const VALID_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** CONTRACT 1: every response carries X-Request-Id, echoing a valid incoming one. */
export const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.get("x-request-id");
  const id = incoming && VALID_ID.test(incoming) ? incoming : newId("req");
  res.locals.requestId = id;
  res.setHeader("X-Request-Id", id);
  next();
};
