import type { Express } from "express";
import type { OpenAPIObject } from "trpc-to-openapi";
import type { AppContext } from "../context";
import { mountAuthRoutes } from "../auth/mount";
import { lowerCaseMediaType } from "../http/content-type";
import { jsonParser } from "../http/json-body";
import type { MethodRules } from "./method-not-allowed";
import { noStore } from "../http/no-store";
import { csrfGuard } from "./csrf";
import { renderDocsPage } from "./docs-page";
import { objectBody } from "./object-body";
import { restHandler } from "./rest";
import { trpcEndpoint } from "./trpc-endpoint";

/** /api: tRPC for the dashboard, the REST routes generated from the same routers, the OpenAPI document and its page. */
export async function mountApi(app: Express, ctx: AppContext, document: () => OpenAPIObject, methods: MethodRules): Promise<void> {
  app.use("/api", noStore, lowerCaseMediaType, csrfGuard(ctx.config.publicUrl));
  app.get("/api/openapi.json", (_req, res) => {
    res.json(document());
  });
  app.get("/api/docs", (_req, res) => {
    res.type("html").send(renderDocsPage(document()));
  });
  app.use("/api/trpc", ...trpcEndpoint(ctx));
  mountAuthRoutes(app, ctx, methods);
  app.use("/api", jsonParser(ctx.config.jsonBodyLimitBytes), objectBody, restHandler(ctx));
  app.use(methods.methodNotAllowed);
}
