import type { Request, RequestHandler, Response } from "express";
import { AppError, isAppError } from "@gw/shared";
import type { AppContext, Principal } from "../../context";
import { observationOf } from "../../observability/request-observation";

const invalidKey = (message: string) => new AppError("invalid_api_key", message);
const missingKey = () => invalidKey("Missing API key: send 'Authorization: Bearer <API_KEY>'.");
/** The refusal of the `/api` routes that take a session or a key (as `/api/billing/*`): neither was sent. */
const noCredentials = () => new AppError("unauthorized", "Authentication required: log in or send an API key.");

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
      res.locals.principal = await observationOf(res).step("key_check", principalFrom(ctx, req, missing));
    } catch (err) {
      opts.onRefused?.(res);
      throw err;
    }
    next();
  };
}

/**
 * The dashboard's session reader also refuses cookie-authenticated writes from another site (CONTRACT 2). Only "no
 * valid session" reads as a missing key: its other refusals (session_expired, csrf_rejected) and failures (the
 * database unreachable: 503) reach the client as they are.
 */
async function principalFrom(ctx: AppContext, req: Request, missing: () => AppError): Promise<Principal> {
  let result;
  try {
    result = await ctx.credentials.verify(req);
  } catch (err) {
    // only the session reader refuses with `unauthorized` (a key's refusals are invalid_api_key or their own codes)
    if (isAppError(err) && err.code === "unauthorized") throw missing();
    throw err;
  }
  if (result.ok) return result.principal;
  switch (result.code) {
    case "no_credentials": throw missing();
    case "malformed_authorization": throw invalidKey("Invalid API key: the Authorization header must be 'Bearer <API_KEY>'.");
    case "invalid_key": throw invalidKey("Invalid API key: the key is unknown or revoked.");
  }
}
