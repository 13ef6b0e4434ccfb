import type { Request } from "express";
import { bearerToken } from "@gw/shared";
import type { AppContext, Principal } from "../context";

/**
 * Session or API key (SPEC 5), as the tRPC `sessionOrKeyProcedure` decides it: an Authorization header means key
 * authentication (a bad key is not rescued by a cookie), otherwise the session cookie. Null when unauthenticated;
 * session errors (session_expired, unauthorized) are thrown as AppErrors.
 */
export async function principalOf(ctx: AppContext, req: Request): Promise<Principal | null> {
  const header = req.get("authorization");
  if (header !== undefined) {
    const token = bearerToken(header);
    const principal = token ? await ctx.apiKeys.verify(token) : null;
    if (principal?.keyId) ctx.apiKeys.recordUse(principal.keyId);
    return principal;
  }
  return ctx.sessions.fromRequest(req);
}
