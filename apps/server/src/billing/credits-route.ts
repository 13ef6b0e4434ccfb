import type { Request, Response } from "express";
import { setRateLimitHeaders } from "@gw/limits";
import { isAppError } from "@gw/shared";
import type { AppContext } from "../context";
import { sendError } from "../http/errors";

/**
 * GET /api/billing/credits answers errors in SPEC 7.1's flat form ({error: "Unauthorized"} / {error: "Internal server
 * error"}), which the REST adapter's nested errors cannot express, so it is an Express route mounted before it.
 * Rate limiting keeps the nested rate_limit_exceeded form (CONTRACT 1 only names 401 and 500 for the flat form).
 */
export function creditsRoute(ctx: AppContext) {
  return async (req: Request, res: Response): Promise<void> => {
    let verified;
    try {
      // CONTRACT 10's expiry and address checks are the model routes': this flat form has no answer for them
      verified = await ctx.credentials.verify(req, { checkAccess: false });
    } catch (err) {
      if (isAppError(err) && err.status === 401) {
        res.status(401).json({ error: "Unauthorized" });
        return;
      }
      // a key of a suspended account: CONTRACT 12's 403, in the nested form of the codes of part two
      if (isAppError(err) && err.code === "account_suspended") return sendError(res, err, req);
      ctx.logger.error({ err, requestId: res.locals.requestId }, "credits: authentication failed");
      res.status(500).json({ error: "Internal server error" });
      return;
    }
    if (!verified.ok) {
      res.status(401).json({ error: "Unauthorized" });
      return;
    }
    const { principal } = verified;
    try {
      setRateLimitHeaders(res, await ctx.limits.consume("credits", `user:${principal.userId}`));
    } catch (err) {
      if (isAppError(err)) return sendError(res, err, req);
      throw err;
    }
    try {
      res.json(await ctx.billing.credits(principal.userId));
    } catch (err) {
      ctx.logger.error({ err, requestId: res.locals.requestId }, "credits: balance could not be read");
      res.status(500).json({ error: "Internal server error" });
    }
  };
}
