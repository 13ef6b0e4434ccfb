import { Router, type Response } from "express";
import { OAUTH_STATE_COOKIE, readCookie, type OAuthRedirect } from "@gw/auth";
import type { AppContext } from "../context";
import { notFound } from "../http/errors";
import type { MethodRules } from "../api/method-not-allowed";

function redirect(res: Response, to: OAuthRedirect): void {
  for (const cookie of to.setCookies) res.append("Set-Cookie", cookie);
  res.setHeader("Cache-Control", "no-store");
  res.redirect(302, to.location);
}

const queryString = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** GET /api/auth/oauth/:provider → 302 to the provider; GET /api/auth/callback → 302 to /dashboard or /login?error=. */
export function oauthRoutes(ctx: AppContext, methods: MethodRules): Router {
  const router = Router();
  router.get("/api/auth/oauth/:provider", async (req, res, next) => {
    try {
      redirect(res, await ctx.auth.oauth.begin(req.params.provider));
    } catch (err) {
      next(err);
    }
  });
  // HEAD is safe (RFC 9110): it must not use up the state and sign in, as the GET it would otherwise run does
  router.head("/api/auth/callback", notFound);
  router.get("/api/auth/callback", async (req, res, next) => {
    try {
      const query = { code: queryString(req.query.code), state: queryString(req.query.state), error: queryString(req.query.error) };
      redirect(res, await ctx.auth.oauth.complete(query, readCookie(req.get("cookie"), OAUTH_STATE_COOKIE)));
    } catch (err) {
      next(err);
    }
  });
  // not Express's own 200 text/plain "GET, HEAD": the JSON 405 (with Allow) of any other undeclared method
  router.options(["/api/auth/oauth/:provider", "/api/auth/callback"], methods.methodNotAllowed);
  return router;
}
