import type { Request, Response } from "express";
import { AppError } from "@gw/shared";
import { listModels } from "@gw/providers/catalog";
import type { GatewayDeps } from "../deps";

/** GET /v1/models and /api/v1/models: every configured model, upstream configured or not (CONTRACT 4, 5). */
export function models(deps: GatewayDeps) {
  return (_req: Request, res: Response) => {
    res.json({ object: "list", data: listModels(deps.ctx.config) });
  };
}

/** GET /v1/models/{id} (the OpenAI SDKs' `models.retrieve`): one entry of that list, or 404 naming the id. */
export function model(deps: GatewayDeps) {
  return (req: Request, res: Response) => {
    const id = String(req.params.id ?? "");
    const entry = listModels(deps.ctx.config).find((m) => m.id === id);
    if (!entry) throw new AppError("not_found", `The model '${id}' does not exist.`);
    res.json(entry);
  };
}
