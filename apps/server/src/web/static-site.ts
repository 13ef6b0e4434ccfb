import { readFileSync } from "node:fs";
import path from "node:path";
import express, { type RequestHandler, type Response, Router } from "express";

// Routes owned by the API and gateway: never answered with the SPA shell, so clients get JSON 404s.
const API_PREFIXES = ["/api/", "/v1/"];
const isApiPath = (p: string) => p === "/api" || p === "/v1" || API_PREFIXES.some((prefix) => p.startsWith(prefix));

/** The dashboard talks only to its own origin; images and audio may come from upstream URLs. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob: https: http:",
  "media-src 'self' data: blob: https: http:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

function sendShell(res: Response, html: string): void {
  res.setHeader("Cache-Control", "no-cache");
  res.setHeader("Content-Security-Policy", CSP);
  res.setHeader("Referrer-Policy", "same-origin");
  res.type("html").send(html);
}

/**
 * Serves the built dashboard: hashed files under /assets are immutable, index.html is revalidated on every load,
 * and any other GET outside /api and /v1 gets index.html so client-side routes survive a reload.
 */
export function staticSite(distDir: string): Router {
  const router = Router();
  const indexHtml = readFileSync(path.join(distDir, "index.html"), "utf8");

  router.use(
    express.static(distDir, {
      index: false,
      redirect: false,
      setHeaders(res, filePath) {
        const rel = path.relative(distDir, filePath);
        res.setHeader("Cache-Control", rel.startsWith(`assets${path.sep}`) ? "public, max-age=31536000, immutable" : "no-cache");
      },
    }),
  );

  const fallback: RequestHandler = (req, res, next) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || isApiPath(req.path) || req.path.startsWith("/assets/")) {
      next();
      return;
    }
    sendShell(res, indexHtml);
  };
  router.use(fallback);
  return router;
}

/** Shown when the server runs without a built dashboard (e.g. straight from sources). */
export function missingBuildPage(): RequestHandler {
  return (req, res, next) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || isApiPath(req.path)) {
      next();
      return;
    }
    res.status(503).setHeader("Cache-Control", "no-store");
    res.type("text/plain").send("The dashboard is not built yet. Run `npm run build` (or `npm start`, which builds it) and reload.\n");
  };
}
