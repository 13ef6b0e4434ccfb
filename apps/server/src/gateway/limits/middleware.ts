import type { RequestHandler } from "express";
import type { AppContext } from "../../context";
import { principalOf } from "../http/auth";
import type { RequestLimits } from "./request-limits";

/** Applies the caller's plan limits and puts X-RateLimit-* on every answer from here on (errors included). */
export function enforceLimits(ctx: AppContext, limits: RequestLimits): RequestHandler {
  return async (_req, res, next) => {
    const principal = principalOf(res);
    const plan = await ctx.plans.planFor(principal.userId);
    const { headers, slot } = await limits.admit(principal.userId, plan);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.once("close", () => slot.release());
    next();
  };
}
