import type { Request, Response } from "express";
import { AppError } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { modelEntries } from "./model-endpoints";

/** GET /v1/models and /api/v1/models: every configured model, upstream configured or not (CONTRACT 4, 5). */
export function models(deps: GatewayDeps) {
  return (_req: Request, res: Response) => {
    res.json({ object: "list", data: modelEntries(deps.ctx.config.models) });
  };
}

/**
 * `/v1/models/{id}` and `/api/v1/models/{id}` (any letter case, an optional trailing slash). No capturing group: the
 * router would decode it, and fail, before the route's handlers run.
 */
export const MODEL_ENTRY_PATH = /^\/(?:api\/)?v1\/models\/[^/]+\/?$/i;

/** The id: the path's last segment, percent-decoded. */
function modelId(path: string): string {
  const trimmed = path.endsWith("/") ? path.slice(0, -1) : path;
  const encoded = trimmed.slice(trimmed.lastIndexOf("/") + 1);
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new AppError("invalid_parameter", "Invalid parameter 'path': malformed percent-encoding.");
  }
}

/** GET /v1/models/{id} (the OpenAI SDKs' `models.retrieve`): one entry of that list, or 404 naming the id. */
export function model(deps: GatewayDeps) {
  return (req: Request, res: Response) => {
    const id = modelId(req.path);
    const entry = modelEntries(deps.ctx.config.models).find((m) => m.id === id);
    if (!entry) throw new AppError("not_found", `The model '${id.slice(0, 100)}' does not exist.`);
    res.json(entry);
  };
}
