import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import express, { type RequestHandler, type Response, Router } from "express";

// Routes owned by the API and gateway: never answered with the SPA shell, so clients get JSON 404s.
const API_PREFIXES = ["/api/", "/v1/"];
/** Spelled as the router matches it: case-insensitive, and `//v1/models` or `/api//keys` is no page of the dashboard either. */
function isApiPath(raw: string): boolean {
  const p = raw.replace(/\/{2,}/g, "/").toLowerCase();
  return p === "/api" || p === "/v1" || API_PREFIXES.some((prefix) => p.startsWith(prefix));
}

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

function shellHeaders(res: Response): void {
  res.setHeader("Content-Security-Policy", CSP);
  res.setHeader("Referrer-Policy", "same-origin");
}

function sendShell(res: Response, html: string): void {
  res.setHeader("Cache-Control", "no-cache");
  shellHeaders(res);
  res.type("html").send(html);
}

const IMMUTABLE = "public, max-age=31536000, immutable";
const COMPRESSIBLE = /\.(?:js|css|svg|json|txt|html|map)$/;

/**
 * The hashed text assets, gzipped once at start (the bundle is ~390 KB, ~120 KB gzipped: three times faster on a slow
 * phone network). Only files listed here are answered, so no request path reaches the file system.
 */
function gzippedAssets(distDir: string): RequestHandler {
  const dir = path.join(distDir, "assets");
  const files = new Map<string, Buffer>();
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    if (COMPRESSIBLE.test(name)) files.set(`/assets/${name}`, gzipSync(readFileSync(path.join(dir, name))));
  }
  return (req, res, next) => {
    const gz = req.method === "GET" || req.method === "HEAD" ? files.get(req.path) : undefined;
    if (!gz) {
      next();
      return;
    }
    res.vary("Accept-Encoding");
    // negotiated, so "gzip;q=0" (RFC 9110: not acceptable) gets the plain file; no header gets it too
    if (req.acceptsEncodings("gzip") !== "gzip") {
      next();
      return;
    }
    res.setHeader("Cache-Control", IMMUTABLE);
    res.setHeader("Content-Encoding", "gzip");
    res.type(path.extname(req.path)).send(gz);
  };
}

/**
 * Serves the built dashboard: hashed files under /assets are immutable (text ones gzipped), index.html is revalidated on every load,
 * and any other GET outside /api and /v1 gets index.html so client-side routes survive a reload.
 */
export function staticSite(distDir: string): Router {
  const router = Router();
  const indexHtml = readFileSync(path.join(distDir, "index.html"), "utf8");

  // Asked for by name, the shell keeps its security headers (CSP with frame-ancestors 'none'), as on every route.
  // A middleware, not a route: Express answers an OPTIONS of a route's path itself (200 text/plain "GET, HEAD"),
  // where any non-GET request here is the JSON 404.
  router.use((req, res, next) => {
    if ((req.method === "GET" || req.method === "HEAD") && req.path === "/index.html") sendShell(res, indexHtml);
    else next();
  });
  router.use(gzippedAssets(distDir));
  router.use(
    express.static(distDir, {
      index: false,
      redirect: false,
      setHeaders(res, filePath) {
        const rel = path.relative(distDir, filePath);
        res.setHeader("Cache-Control", rel.startsWith(`assets${path.sep}`) ? IMMUTABLE : "no-cache");
        // the shell reached by another spelling of its path (/%69ndex.html, /assets/..%2findex.html) is the same page
        if (rel === "index.html") shellHeaders(res);
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
