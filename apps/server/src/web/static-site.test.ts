import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findWebDist } from "./dist-dir";
import { missingBuildPage, staticSite } from "./static-site";

const BUNDLE = `console.log(${JSON.stringify("x".repeat(2000))});`;

function fakeDist(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gw-web-dist-"));
  mkdirSync(path.join(dir, "assets"));
  writeFileSync(path.join(dir, "index.html"), "<!doctype html><div id=root></div>");
  writeFileSync(path.join(dir, "assets", "index-abc123.js"), BUNDLE);
  writeFileSync(path.join(dir, "robots.txt"), "User-agent: *");
  return dir;
}

async function listen(app: express.Express): Promise<{ url: string; server: Server }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe("staticSite", () => {
  let url: string;
  let server: Server;
  beforeAll(async () => {
    const app = express();
    app.use(staticSite(fakeDist()));
    app.use((_req, res) => { res.status(404).json({ error: { code: "not_found" } }); });
    ({ url, server } = await listen(app));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("serves hashed assets as immutable and other files as no-cache", async () => {
    const asset = await fetch(`${url}/assets/index-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const robots = await fetch(`${url}/robots.txt`);
    expect(robots.headers.get("cache-control")).toBe("no-cache");
  });

  it("sends text assets gzipped to clients that accept it, with the same caching, and plain to the others", async () => {
    const zipped = await fetch(`${url}/assets/index-abc123.js`, { headers: { "accept-encoding": "gzip, deflate, br" } });
    expect(zipped.status).toBe(200);
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("vary")).toMatch(/Accept-Encoding/i);
    expect(zipped.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(zipped.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await zipped.text()).toBe(BUNDLE); // fetch decodes the gzip body
    const plain = await fetch(`${url}/assets/index-abc123.js`, { headers: { "accept-encoding": "identity" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("vary")).toMatch(/Accept-Encoding/i);
    expect(await plain.text()).toBe(BUNDLE);
    for (const refused of ["gzip;q=0", "br, gzip;q=0", "*;q=0", "x-gzip"]) {
      const res = await fetch(`${url}/assets/index-abc123.js`, { headers: { "accept-encoding": refused } });
      expect(res.headers.get("content-encoding"), refused).toBeNull();
      expect(await res.text()).toBe(BUNDLE);
    }
    const wildcard = await fetch(`${url}/assets/index-abc123.js`, { headers: { "accept-encoding": "*" } });
    expect(wildcard.headers.get("content-encoding")).toBe("gzip");
    const missing = await fetch(`${url}/assets/../index.html`, { headers: { "accept-encoding": "gzip" } });
    expect(missing.headers.get("content-encoding")).toBeNull();
  });

  it("answers client-side routes with index.html, revalidated on every load", async () => {
    for (const route of ["/", "/index.html", "/dashboard", "/dashboard/keys", "/verify-email?token=abc", "/settings/profile"]) {
      const res = await fetch(`${url}${route}`);
      expect(res.status, route).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("referrer-policy")).toBe("same-origin");
      expect(await res.text()).toContain('<div id=root>');
    }
  });

  it("keeps the shell's security headers when index.html is asked for by another spelling of its path", async () => {
    // express.static decodes the path, so each of these reaches dist/index.html; a browser sends them as written
    for (const route of ["/%69ndex.html", "/index%2ehtml", "/assets/..%2findex.html", "/assets/..%2Findex.html"]) {
      const res = await fetch(`${url}${route}`);
      expect(res.status, route).toBe(200);
      expect(await res.text()).toContain("<div id=root>");
      expect(res.headers.get("content-security-policy"), route).toContain("frame-ancestors 'none'");
      expect(res.headers.get("referrer-policy"), route).toBe("same-origin");
    }
  });

  it("never answers API paths, missing assets or non-GET requests with the shell", async () => {
    for (const [method, route] of [["GET", "/api/nope"], ["GET", "/v1/nope"], ["GET", "/api"], ["GET", "//v1/models"], ["GET", "/api//keys"], ["GET", "/V1/nope"], ["GET", "//API"], ["GET", "/assets/missing.js"], ["POST", "/dashboard"], ["OPTIONS", "/index.html"], ["OPTIONS", "/dashboard"]] as const) {
      const res = await fetch(`${url}${route}`, { method });
      expect(res.status, `${method} ${route}`).toBe(404);
      expect(await res.json()).toEqual({ error: { code: "not_found" } });
    }
  });
});

describe("missingBuildPage", () => {
  it("tells the operator to build, and leaves API paths alone", async () => {
    const app = express();
    app.use(missingBuildPage());
    app.use((_req, res) => { res.status(404).end(); });
    const { url, server } = await listen(app);
    try {
      const page = await fetch(`${url}/dashboard`);
      expect(page.status).toBe(503);
      expect(await page.text()).toContain("npm run build");
      expect((await fetch(`${url}/api/keys`)).status).toBe(404);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("findWebDist", () => {
  it("finds apps/web/dist from the sources and from the bundle directory", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "gw-layout-"));
    const dist = path.join(root, "apps", "web", "dist");
    mkdirSync(dist, { recursive: true });
    writeFileSync(path.join(dist, "index.html"), "x");
    expect(findWebDist(path.join(root, "apps", "server", "src", "web"))).toBe(dist);
    expect(findWebDist(path.join(root, "apps", "server", "dist"))).toBe(dist);
  });
});
