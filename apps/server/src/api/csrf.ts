import type { RequestHandler } from "express";
import { readCookie, SESSION_COOKIE } from "@gw/auth";
import { AppError } from "@gw/shared";

export const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The refusal of a cross-site request, quoting at most 200 characters of its Origin. */
export const crossSiteRefusal = (origin: string, allowed: string) =>
  new AppError("csrf_rejected", `Cross-site request refused: Origin ${origin.slice(0, 200)} is not ${allowed}.`);

/**
 * CONTRACT 2: a state-changing request carrying the session cookie whose Origin is present and differs from
 * PUBLIC_URL's origin is refused with 403 csrf_rejected, before any route runs. Requests without the session
 * cookie (API-key clients, curl) are not affected; SameSite=Lax is the first line of defence, this the second.
 */
export function csrfGuard(publicUrl: string): RequestHandler {
  const allowed = new URL(publicUrl).origin;
  return (req, _res, next) => {
    const origin = req.get("origin");
    if (!STATE_CHANGING.has(req.method) || origin === undefined) return next();
    if (!readCookie(req.get("cookie"), SESSION_COOKIE)) return next();
    if (origin === allowed) return next();
    next(crossSiteRefusal(origin, allowed));
  };
}
