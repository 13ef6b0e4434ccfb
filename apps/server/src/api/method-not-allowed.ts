import type { Request, RequestHandler, Response } from "express";
import type { OpenAPIObject } from "trpc-to-openapi";
import { AppError } from "@gw/shared";

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

export interface MethodRules {
  /**
   * For a request no route took: when the OpenAPI document declares its path (with other methods), 405
   * `method_not_allowed` with `Allow` (RFC 9110) set on `res`, rather than the 404 of a path that does not exist.
   */
  undeclaredMethod(req: Request, res: Response): AppError | undefined;
  /** undeclaredMethod as the last handler: mounted after every route, it answers only what no route took. */
  methodNotAllowed: RequestHandler;
}

/** The 405 answers of the app's OpenAPI document (its paths read at the first such answer). */
export function methodRules(document: () => OpenAPIObject): MethodRules {
  let documented: DocumentedPath[] | undefined;
  const undeclaredMethod = (req: Request, res: Response): AppError | undefined => {
    documented ??= documentedPaths(document());
    // the whole path: under a router's mount path (`router.use("/v1", …)`) req.path is only the rest
    const path = req.originalUrl.split("?")[0] ?? req.path;
    const match = documented.find((p) => p.pattern.test(path));
    if (!match) return undefined;
    res.setHeader("Allow", match.allow);
    return new AppError("method_not_allowed", `${req.method} is not allowed on ${path}; allowed: ${match.allow}.`);
  };
  return { undeclaredMethod, methodNotAllowed: (req, res, next) => next(undeclaredMethod(req, res)) };
}
