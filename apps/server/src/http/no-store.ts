import type { RequestHandler } from "express";

/** API responses carry account data: never stored by caches unless a route says otherwise. */
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader("Cache-Control", "no-store");
  next();
};
