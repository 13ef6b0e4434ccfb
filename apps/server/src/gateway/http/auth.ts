import type { Request, RequestHandler, Response } from "express";
import { AppError, bearerToken, isAppError } from "@gw/shared";
import type { AppContext, Principal } from "../../context";

const invalidKey = (message: string) => new AppError("invalid_api_key", message);

export function principalOf(res: Response): Principal {
  const principal = (res.locals as { principal?: Principal }).principal;
  if (!principal) throw new AppError("internal_error", "request was not authenticated");
  return principal;
}

/**
 * The dashboard's session cookie; the reader also refuses cookie-authenticated writes from another site (CONTRACT 2).
 * Only "no valid session" reads as a missing key: its other refusals (session_expired, csrf_rejected) and failures
 * (the database unreachable: 503) reach the client as they are.
 */
async function fromSession(ctx: AppContext, req: Request): Promise<Principal> {
  let principal: Principal | null;
  try {
    principal = await ctx.sessions.fromRequest(req);
  } catch (err) {
    if (!isAppError(err) || err.code !== "unauthorized") throw err;
    principal = null;
  }
  if (!principal) throw invalidKey("Missing API key: send 'Authorization: Bearer <API_KEY>'.");
  return principal;
}

/**
 * `Authorization: Bearer <key>` through the cached key verifier; without that header, the dashboard's session
 * cookie (the playground calls the gateway with it).
 */
export function authenticate(ctx: AppContext, opts: { onRefused?: (res: Response) => void } = {}): RequestHandler {
  return async (req, res, next) => {
    try {
      res.locals.principal = await principalFrom(ctx, req);
    } catch (err) {
      opts.onRefused?.(res);
      throw err;
    }
    next();
  };
}

async function principalFrom(ctx: AppContext, req: Request): Promise<Principal> {
  const header = req.get("authorization");
  if (header === undefined) {
    if (req.headers.cookie) return fromSession(ctx, req);
    throw invalidKey("Missing API key: send 'Authorization: Bearer <API_KEY>'.");
  }
  const raw = bearerToken(header);
  if (!raw) throw invalidKey("Invalid API key: the Authorization header must be 'Bearer <API_KEY>'.");
  const verified = await ctx.apiKeys.verify(raw);
  if (!verified) throw invalidKey("Invalid API key: the key is unknown or revoked.");
  if (verified.keyId) ctx.apiKeys.recordUse(verified.keyId);
  return verified;
}
