import type { Request, RequestHandler, Response } from "express";
import { checkKeyAccess } from "@gw/auth/api-keys/index";
import { AppError, bearerToken, isAppError } from "@gw/shared";
import type { AppContext, Principal } from "../../context";

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
 * The dashboard's session cookie; the reader also refuses cookie-authenticated writes from another site (CONTRACT 2).
 * Only "no valid session" reads as a missing key: its other refusals (session_expired, csrf_rejected) and failures
 * (the database unreachable: 503) reach the client as they are.
 */
async function fromSession(ctx: AppContext, req: Request, missing: () => AppError): Promise<Principal> {
  let principal: Principal | null;
  try {
    principal = await ctx.sessions.fromRequest(req);
  } catch (err) {
    if (!isAppError(err) || err.code !== "unauthorized") throw err;
    principal = null;
  }
  if (!principal) throw missing();
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
      res.locals.principal = await principalFrom(ctx, req, missing);
    } catch (err) {
      opts.onRefused?.(res);
      throw err;
    }
    next();
  };
}

async function principalFrom(ctx: AppContext, req: Request, missing: () => AppError): Promise<Principal> {
  const header = req.get("authorization");
  if (header === undefined) {
    if (req.headers.cookie) return fromSession(ctx, req, missing);
    throw missing();
  }
  const raw = bearerToken(header);
  if (!raw) throw invalidKey("Invalid API key: the Authorization header must be 'Bearer <API_KEY>'.");
  const verified = await ctx.apiKeys.verify(raw);
  if (!verified) throw invalidKey("Invalid API key: the key is unknown or revoked.");
  // CONTRACT 10's first refusals (expired, then the client address), from the cached key: no database round trip
  if (verified.key) checkKeyAccess(verified.key, ctx.clock.now(), req.ip);
  if (verified.keyId) ctx.apiKeys.recordUse(verified.keyId);
  return verified;
}
