import type { RequestHandler, Response } from "express";

/**
 * The gateway's own headers a browser client reads (request id, cost, limits, replay, deprecation, and the OpenAI
 * SDKs' retry hint x-should-retry, without which a browser SDK retries a 409 or 503 that says not to): CORS hides
 * every response header but a safelisted few unless they are named here.
 */
const EXPOSED_HEADERS = "X-Request-Id, X-Request-Cost, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Idempotent-Replayed, Deprecation, X-Should-Retry, X-Gateway-Model";
/** Chromium caps a cached preflight at 2 hours; Firefox would keep it a day. */
const MAX_AGE_SECONDS = "7200";
/** A header-name list as Access-Control-Request-Headers carries it; anything else is not echoed. */
const HEADER_NAMES = /^[!#$%&'*+.^`|~\w-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^`|~\w-]+)*$/;

export interface ApiCors {
  /** on every actual request: Allow-Origin and Expose-Headers when its Origin is allowed */
  actual: RequestHandler;
  /** answers a preflight (OPTIONS with Origin and Access-Control-Request-Method) to a route taking `methods` */
  preflight(methods: string, opts?: { onAnswer?: (res: Response) => void }): RequestHandler;
}

/**
 * CORS for the API-key routes, so browser apps can call them as they call OpenAI's API. Never with credentials:
 * these routes authenticate with a bearer key, and the session cookie's routes keep their CSRF check instead.
 * `origins`: `*` (any), a list (answered with the matching origin and `Vary: Origin`), or empty: no CORS at all.
 * A request without Origin (server-side clients) costs one header lookup.
 */
export function apiCors(origins: "*" | readonly string[]): ApiCors | undefined {
  if (origins !== "*" && origins.length === 0) return undefined;
  const listed = origins === "*" ? undefined : new Set(origins);
  const allowOrigin = (res: Response, origin: string): string | undefined => {
    if (!listed) return "*";
    res.vary("Origin");
    return listed.has(origin) ? origin : undefined;
  };

  return {
    actual: (req, res, next) => {
      const origin = req.headers.origin;
      if (origin !== undefined) {
        const allowed = allowOrigin(res, origin);
        if (allowed !== undefined) {
          res.setHeader("Access-Control-Allow-Origin", allowed);
          res.setHeader("Access-Control-Expose-Headers", EXPOSED_HEADERS);
        }
      }
      next();
    },
    preflight: (methods, opts = {}) => (req, res, next) => {
      const origin = req.headers.origin;
      // a bare OPTIONS is no preflight: the route answers it as before
      if (origin === undefined || req.headers["access-control-request-method"] === undefined) {
        next();
        return;
      }
      const allowed = allowOrigin(res, origin);
      if (allowed !== undefined) {
        res.setHeader("Access-Control-Allow-Origin", allowed);
        res.setHeader("Access-Control-Allow-Methods", methods);
        const requested = req.headers["access-control-request-headers"];
        if (requested !== undefined && HEADER_NAMES.test(requested)) {
          res.vary("Access-Control-Request-Headers");
          res.setHeader("Access-Control-Allow-Headers", requested);
        }
        res.setHeader("Access-Control-Max-Age", MAX_AGE_SECONDS);
      }
      opts.onAnswer?.(res);
      res.status(204).end();
    },
  };
}
