import type { Express } from "express";
import type { AppContext } from "../context";
import { findWebDist } from "./dist-dir";
import { missingBuildPage, staticSite } from "./static-site";

/** The dashboard is served by the same server at / (CONTRACT 8); mounted last so API routes win. */
export async function mountWeb(app: Express, ctx: AppContext): Promise<void> {
  const distDir = findWebDist();
  if (!distDir) {
    ctx.logger.warn("apps/web/dist not found: serving a placeholder page; run `npm run build`");
    app.use(missingBuildPage());
    return;
  }
  app.use(staticSite(distDir));
}
