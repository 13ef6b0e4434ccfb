import type { RequestHandler, Response } from "express";
import { gatewayPrincipal, missingKey, noCredentials } from "@gw/api";
import { AppError } from "@gw/shared";
import type { AppContext, Principal } from "../../context";
import { observationOf } from "../../observability/request-observation";

export function principalOf(res: Response): Principal {
  const principal = (res.locals as { principal?: Principal }).principal;
  if (!principal) throw new AppError("internal_error", "request was not authenticated");
  return principal;
}

/**
 * `Authorization: Bearer <key>` through the cached key verifier; without that header, the dashboard's session
 * cookie (the playground calls the gateway with it). `sessionOrKey`: a route of the `/api` REST conventions (GET
 * /api/usage), where neither credential is 401 `unauthorized` as on the other session-or-key routes, not a missing key.
 */
export function authenticate(ctx: AppContext, opts: { onRefused?: (res: Response) => void; sessionOrKey?: boolean } = {}): RequestHandler {
  const missing = opts.sessionOrKey ? noCredentials : missingKey;
  return async (req, res, next) => {
    try {
      res.locals.principal = await observationOf(res).step("key_check", gatewayPrincipal(ctx.credentials, req, missing));
    } catch (err) {
      opts.onRefused?.(res);
      throw err;
    }
    next();
  };
}
