import type { RequestHandler, Response } from "express";
import { setRateLimitHeaders, type RateLimitState, type RequestLimits } from "@gw/limits";
import type { AppContext } from "../../context";
import { observationOf } from "../../observability/request-observation";
import { principalOf } from "../http/auth";

/** Where the caller's account stands, once enforceLimits has counted the request. */
export function accountLimitOf(res: Response): RateLimitState | undefined {
  return (res.locals as { accountLimit?: RateLimitState }).accountLimit;
}

/** Applies the caller's plan limits and puts X-RateLimit-* on every answer from here on (errors included). */
export function enforceLimits(ctx: AppContext, limits: RequestLimits): RequestHandler {
  return async (_req, res, next) => {
    const principal = principalOf(res);
    const plan = await ctx.plans.planFor(principal.userId);
    const { state, slot } = await observationOf(res).step("limits", limits.admit(principal.userId, plan));
    // A client that left while the limits were checked (a plan or Redis round trip) has had its `close` already:
    // a listener added now would never run and the slot would stay taken (for good in memory). Nobody is waiting
    // for this answer, so the request ends here.
    if (res.destroyed) {
      slot.release();
      return;
    }
    setRateLimitHeaders(res, state);
    res.locals.accountLimit = state;
    res.once("close", () => slot.release());
    next();
  };
}
