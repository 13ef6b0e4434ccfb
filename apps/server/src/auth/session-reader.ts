import type { Request } from "express";
import { readCookie, SESSION_COOKIE, sessionPrincipal, type AuthServices } from "@gw/auth";
import { crossSiteRefusal, STATE_CHANGING } from "../api/csrf";
import type { Principal, SessionReader } from "../context";

/**
 * The session cookie → Principal (@gw/auth's sessionPrincipal). Also applies CONTRACT 2's Origin check to
 * cookie-authenticated state changes, and sends the renewed cookie back when the session slid forward.
 */
export function createSessionReader(auth: Pick<AuthServices, "sessions" | "users">, publicUrl: string): SessionReader {
  const allowedOrigin = new URL(publicUrl).origin;
  // one read per request, however many middlewares ask
  const perRequest = new WeakMap<Request, Promise<Principal | null>>();

  async function read(req: Request): Promise<Principal | null> {
    const cookieHeader = req.get("cookie");
    if (!readCookie(cookieHeader, SESSION_COOKIE)) return null;
    const origin = req.get("origin");
    if (STATE_CHANGING.has(req.method) && origin !== undefined && origin !== allowedOrigin) {
      throw crossSiteRefusal(origin, allowedOrigin);
    }
    const session = await sessionPrincipal(auth, cookieHeader);
    if (!session) return null;
    if (session.setCookie && req.res && !req.res.headersSent) req.res.append("Set-Cookie", session.setCookie);
    return session.principal;
  }

  return {
    fromRequest(req) {
      let pending = perRequest.get(req);
      if (!pending) {
        pending = read(req);
        perRequest.set(req, pending);
      }
      return pending;
    },
    isActive: (sessionId) => auth.sessions.isActive(sessionId),
  };
}
