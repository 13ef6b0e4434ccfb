import type { Request, Response } from "express";
import { listModels } from "@gw/providers/catalog";
import type { GatewayDeps } from "../deps";

/** GET /v1/models and /api/v1/models: every configured model, upstream configured or not (CONTRACT 4, 5). */
export function models(deps: GatewayDeps) {
  return (_req: Request, res: Response) => {
    res.json({ object: "list", data: listModels(deps.ctx.config) });
  };
}
