import type { Express, RequestHandler } from "express";
import { buildOpenApiDocument } from "@gw/api/openapi";
import { invalidParameter } from "@gw/shared";
import type { OpenAPIObject } from "trpc-to-openapi";
import type { AppContext } from "../context";
import { mountAuthRoutes } from "../auth/mount";
import { jsonParser } from "../http/json-body";
import { noStore } from "../http/no-store";
import { csrfGuard } from "./csrf";
import { renderDocsPage } from "./docs-page";
import { fieldWithNul } from "./nul-bytes";
import { restHandler } from "./rest";
import { trpcEndpoint } from "./trpc-endpoint";

const API_VERSION = "1.0.0";

/**
 * REST bodies are JSON objects. A POST without any body (logout, POST /api/example) counts as an empty object
 * rather than a missing Content-Type; an array or scalar is refused here, as the adapter would spread it into
 * an object and misreport it.
 */
const objectBody: RequestHandler = (req, _res, next) => {
  if (!["POST", "PUT", "PATCH"].includes(req.method)) return next();
  const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
  if (!hasBody && !req.headers["content-type"]) {
    req.headers["content-type"] = "application/json";
    req.body = {};
  }
  const body: unknown = req.body;
  if (body !== undefined && (typeof body !== "object" || body === null || Array.isArray(body))) {
    return next(invalidParameter("body", "must be a JSON object"));
  }
  const withNul = fieldWithNul(body);
  if (withNul !== undefined) return next(invalidParameter(withNul, "must not contain NUL characters"));
  next();
};

/** /api: tRPC for the dashboard, the REST routes generated from the same routers, the OpenAPI document and its page. */
export async function mountApi(app: Express, ctx: AppContext): Promise<void> {
  let doc: OpenAPIObject | undefined;
  const document = () => (doc ??= buildOpenApiDocument({ baseUrl: `${ctx.config.publicUrl}/api`, version: API_VERSION }));

  app.use("/api", noStore, csrfGuard(ctx.config.publicUrl));
  app.get("/api/openapi.json", (_req, res) => {
    res.json(document());
  });
  app.get("/api/docs", (_req, res) => {
    res.type("html").send(renderDocsPage(document()));
  });
  app.use("/api/trpc", trpcEndpoint(ctx));
  mountAuthRoutes(app, ctx);
  app.use("/api", jsonParser(ctx.config.jsonBodyLimitBytes), objectBody, restHandler(ctx));
}
