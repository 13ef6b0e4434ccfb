import type { NextFunction, Request, Response } from "express";
import type { AppContext } from "../context";

/** POST /api/billing/webhook: the raw body (express.raw) is what the signature covers. */
export function webhookRoute(ctx: AppContext) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      res.json(await ctx.billing.webhook(raw, req.get("stripe-signature")));
    } catch (err) {
      next(err);
    }
  };
}
