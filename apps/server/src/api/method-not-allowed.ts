import type { Request, RequestHandler, Response } from "express";
import type { OpenAPIObject } from "trpc-to-openapi";
import { AppError } from "@gw/shared";
import type { AppContext } from "../context";
import { openApiDocument } from "./openapi-document";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

interface DocumentedPath { pattern: RegExp; allow: string }

/**
 * The document's paths (under their server's base path: the document's, or the path item's own, as the gateway's
 * routes name the public origin) with the methods each declares; HEAD goes with GET.
 */
function documentedPaths(doc: OpenAPIObject): DocumentedPath[] {
  const basePath = (url: string | undefined) => new URL(url ?? "http://localhost").pathname.replace(/\/$/, "");
  return Object.entries(doc.paths ?? {}).map(([template, item]) => {
    const base = basePath(item?.servers?.[0]?.url ?? doc.servers?.[0]?.url);
    const declared = METHODS.filter((m) => item && m in item).map((m) => m.toUpperCase());
    if (declared.includes("GET") && !declared.includes("HEAD")) declared.push("HEAD");
    const source = `${base}${template}`.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^/]+");
    return { pattern: new RegExp(`^${source}/?$`), allow: declared.join(", ") };
  });
}

const paths = new WeakMap<AppContext, DocumentedPath[]>();

/**
 * For a request no route took: when the OpenAPI document declares its path (with other methods), 405
 * `method_not_allowed` with `Allow` (RFC 9110) set on `res`, rather than the 404 of a path that does not exist.
 */
export function undeclaredMethod(ctx: AppContext, req: Request, res: Response): AppError | undefined {
  let documented = paths.get(ctx);
  if (!documented) {
    documented = documentedPaths(openApiDocument(ctx));
    paths.set(ctx, documented);
  }
  // the whole path: under a router's mount path (`router.use("/v1", …)`) req.path is only the rest
  const path = req.originalUrl.split("?")[0] ?? req.path;
  const match = documented.find((p) => p.pattern.test(path));
  if (!match) return undefined;
  res.setHeader("Allow", match.allow);
  return new AppError("method_not_allowed", `${req.method} is not allowed on ${path}; allowed: ${match.allow}.`);
}

/** undeclaredMethod as the last handler: mounted after every route, it answers only what no route took. */
export const methodNotAllowed = (ctx: AppContext): RequestHandler => (req, res, next) => next(undeclaredMethod(ctx, req, res));
