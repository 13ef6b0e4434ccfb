import type { RequestHandler } from "express";
import type { OpenAPIObject } from "trpc-to-openapi";
import { AppError } from "@gw/shared";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

interface DocumentedPath { pattern: RegExp; allow: string }

/** The document's paths (under its server's base path) with the methods each declares; HEAD goes with GET. */
function documentedPaths(doc: OpenAPIObject): DocumentedPath[] {
  const base = new URL(doc.servers?.[0]?.url ?? "http://localhost").pathname.replace(/\/$/, "");
  return Object.entries(doc.paths ?? {}).map(([template, item]) => {
    const declared = METHODS.filter((m) => item && m in item).map((m) => m.toUpperCase());
    if (declared.includes("GET") && !declared.includes("HEAD")) declared.push("HEAD");
    const source = `${base}${template}`.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^/]+");
    return { pattern: new RegExp(`^${source}/?$`), allow: declared.join(", ") };
  });
}

/**
 * A path the OpenAPI document declares, asked with a method it does not: 405 `method_not_allowed` with `Allow` (RFC
 * 9110), rather than the 404 of a path that does not exist. Mounted after every route, so it answers only what no
 * route took.
 */
export function methodNotAllowed(document: () => OpenAPIObject): RequestHandler {
  let paths: DocumentedPath[] | undefined;
  return (req, res, next) => {
    paths ??= documentedPaths(document());
    const match = paths.find((p) => p.pattern.test(req.path));
    if (!match) return next();
    res.setHeader("Allow", match.allow);
    next(new AppError("method_not_allowed", `${req.method} is not allowed on ${req.path}; allowed: ${match.allow}.`));
  };
}
