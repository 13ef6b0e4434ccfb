import { buildOpenApiDocument } from "@gw/api/openapi";
import type { OpenAPIObject } from "trpc-to-openapi";
import type { AppContext } from "../context";
import { gatewayOperations } from "../gateway/openapi";

const API_VERSION = "1.0.0";
const documents = new WeakMap<AppContext, OpenAPIObject>();

/** The app's OpenAPI document, built at its first use and kept (its paths also decide 405 answers). */
export function openApiDocument(ctx: AppContext): OpenAPIObject {
  let doc = documents.get(ctx);
  if (!doc) {
    doc = buildOpenApiDocument({
      baseUrl: `${ctx.config.publicUrl}/api`, version: API_VERSION, gateway: { origin: ctx.config.publicUrl, ...gatewayOperations() },
    });
    documents.set(ctx, doc);
  }
  return doc;
}
