import { buildOpenApiDocument } from "@gw/api";
import type { OpenAPIObject } from "trpc-to-openapi";
import { gatewayOperations } from "../gateway/openapi";

const API_VERSION = "1.0.0";

/** The app's OpenAPI document, built at its first use and then kept (its paths also decide 405 answers). */
export function openApiDocument(publicUrl: string): () => OpenAPIObject {
  let doc: OpenAPIObject | undefined;
  return () => (doc ??= buildOpenApiDocument({
    baseUrl: `${publicUrl}/api`, version: API_VERSION, gateway: { origin: publicUrl, ...gatewayOperations() },
  }));
}
