import { SESSION_COOKIE } from "@gw/auth";
import { ERROR_CODES, type ErrorCode } from "@gw/shared";
import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { EXPRESS_OPERATIONS } from "./openapi-express-routes";
import { bodyTextRules, pathParameterTextRules, portablePatterns, queryParameterText, TEXT_JSON_COMPONENT, textJsonSchema } from "./openapi-text-rules";
import { appRouter } from "./root";
import type { ApiMeta, RouteAuth } from "./trpc";

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

const errorCodes = Object.keys(ERROR_CODES);

/** SPEC 7.1 shapes, which is what the REST layer really answers (not the adapter's default error body). */
type SchemaMap = NonNullable<NonNullable<OpenAPIObject["components"]>["schemas"]>;

const components: SchemaMap = {
  NestedError: {
    type: "object",
    required: ["error"],
    properties: {
      error: {
        type: "object",
        required: ["message", "type", "code"],
        properties: {
          message: { type: "string" },
          type: { type: "string" },
          code: { type: "string", enum: errorCodes },
          current_balance: { type: "number" },
          required_amount: { type: "number" },
        },
      },
    },
  },
  FlatError: {
    type: "object",
    required: ["error"],
    properties: { error: { type: "string", enum: ["Unauthorized", "Internal server error"] } },
  },
  StatusError: {
    type: "object",
    required: ["status", "message", "error_code"],
    properties: { status: { type: "string", enum: ["error", "degraded"] }, message: { type: "string" }, error_code: { type: "string" } },
  },
};

const errorResponse = (description: string, schema: "NestedError" | "StatusError") => ({
  description,
  content: { "application/json": { schema: { $ref: `#/components/schemas/${schema}` } } },
});

/** Methods whose body the REST layer reads: a wrong type, a bad or too large body is refused before any route runs. */
const BODY_METHODS = new Set(["post", "put", "patch"]);
/** State-changing methods: refused cross-site when they carry the session cookie (CONTRACT 2), before any route runs. */
const CSRF_METHODS = new Set(["post", "put", "patch", "delete"]);

/** trpc-to-openapi gives every protected route all the schemes; each route accepts only its procedure kind's. */
const SECURITY: Record<RouteAuth, Array<Record<string, string[]>> | undefined> = {
  none: undefined,
  session: [{ session: [] }],
  sessionOrKey: [{ session: [] }, { apiKey: [] }],
  admin: [{ session: [] }],
};

/** Codes every operation of a kind may answer (CONTRACT 1); routes add their own through `meta.errors`. */
function commonErrors(auth: RouteAuth, hasInput: boolean, method: string): ErrorCode[] {
  const codes: ErrorCode[] = [];
  if (hasInput) codes.push("missing_required_parameter", "invalid_parameter", "invalid_json");
  if (BODY_METHODS.has(method)) codes.push("invalid_parameter", "invalid_json", "payload_too_large", "unsupported_media_type");
  if (auth !== "none") codes.push("unauthorized", "session_expired");
  if (CSRF_METHODS.has(method)) codes.push("csrf_rejected");
  // every authenticated request reads its session or key, and every public POST an account, from the database:
  // while it is unreachable they answer 503 in the status form (docs/api.md)
  if (auth !== "none" || BODY_METHODS.has(method)) codes.push("service_unavailable");
  // a route that takes an API key refuses a bad one with invalid_api_key (CONTRACT 1), not unauthorized
  // a key of a suspended account: 403 account_suspended (CONTRACT 12)
  if (auth === "sessionOrKey") codes.push("invalid_api_key", "account_suspended");
  if (auth === "admin") codes.push("invalid_api_key", "admin_required");
  codes.push("rate_limit_exceeded", "internal_error");
  return codes;
}

function errorResponses(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_CODES[code].status, [...(byStatus.get(ERROR_CODES[code].status) ?? []), code]);
  const out: Record<string, unknown> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    // CONTRACT 1: service_unavailable is answered in the status form, everything else in the nested form.
    out[String(status)] = errorResponse(group.join(", "), group.includes("service_unavailable") ? "StatusError" : "NestedError");
  }
  return out;
}

function procedureMetas(): Map<string, ApiMeta> {
  const metas = new Map<string, ApiMeta>();
  const procedures = appRouter._def.procedures as Record<string, { _def?: { meta?: ApiMeta } }>;
  for (const procedure of Object.values(procedures)) {
    const meta = procedure._def?.meta;
    if (meta?.openapi) metas.set(`${meta.openapi.method.toLowerCase()} ${meta.openapi.path}`, meta);
  }
  return metas;
}

/**
 * The gateway's operations (apps/server builds them from its route schemas): described at their full path, with the
 * public origin as their path's server, since they are not under /api (/v1/chat/completions ...). `auth` is always
 * the API key; `errors` are rendered like a procedure's unless the operation gives its own error responses.
 */
export interface GatewayOperation {
  path: string;
  method: "get" | "post" | "delete";
  operation: Record<string, unknown>;
  /** also `x-api-key` (the Anthropic SDK's header) beside the bearer key */
  anthropicKey?: boolean;
  errors: ErrorCode[];
}

function addGatewayOperations(paths: Record<string, Record<string, unknown>>, origin: string, operations: GatewayOperation[]): void {
  for (const { path, method, operation: given, anthropicKey, errors } of operations) {
    // a copy that shares no object (structuredClone would keep the sharing): the text rules rewrite request schemas
    // in place, and the caller's may use one object in a request and an answer
    const operation = JSON.parse(JSON.stringify(given)) as Record<string, unknown>;
    const responses = { ...errorResponses(errors), ...(operation.responses as Record<string, unknown>) };
    const security = anthropicKey ? [{ apiKey: [] }, { anthropicApiKey: [] }] : [{ apiKey: [] }];
    paths[path] = { servers: [{ url: origin }], ...paths[path], [method]: { ...operation, security, responses } };
  }
}

/** Rewrites the generated responses: real success statuses and the spec's error bodies and codes. */
function withSpecResponses(doc: OpenAPIObject): OpenAPIObject {
  const metas = procedureMetas();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!isObject(item)) continue;
    for (const [method, operation] of Object.entries(item)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue;
      const meta = metas.get(`${method} ${path}`);
      const hasInput = "400" in operation.responses;
      const auth = meta?.auth ?? "none";
      const codes = [...new Set([...commonErrors(auth, hasInput, method), ...(meta?.errors ?? [])])];
      operation.security = SECURITY[auth];
      operation.responses = {
        [String(meta?.successStatus ?? 200)]: operation.responses["200"],
        ...errorResponses(codes),
      };
    }
  }
  const paths: Record<string, Record<string, unknown>> = (doc.paths ??= {}) as Record<string, Record<string, unknown>>;
  for (const { path, method, operation, auth, errors } of EXPRESS_OPERATIONS) {
    const responses = { ...errorResponses(errors), ...(operation.responses as Record<string, unknown>) };
    paths[path] = { ...paths[path], [method]: { ...operation, security: SECURITY[auth], responses } };
  }
  doc.components = { ...doc.components, schemas: { ...(doc.components?.schemas ?? {}), ...components, [TEXT_JSON_COMPONENT]: textJsonSchema } };
  return doc;
}

/** The rules on text the server applies to every route (CONTRACT 7b), stated on each operation; portable patterns. */
function withTextRules(doc: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(doc.paths ?? {})) {
    if (!isObject(item)) continue;
    for (const operation of Object.values(item)) {
      if (!isObject(operation)) continue;
      if (Array.isArray(operation.parameters)) {
        operation.parameters.forEach(pathParameterTextRules);
        operation.parameters.forEach(queryParameterText);
      }
      const body = isObject(operation.requestBody) && isObject(operation.requestBody.content) ? operation.requestBody.content["application/json"] : undefined;
      if (isObject(body)) bodyTextRules(body.schema);
    }
  }
  portablePatterns(doc.paths);
  return doc;
}

/**
 * The OpenAPI 3.1 document of every REST route, generated from the routers' meta, and the gateway's operations when
 * given (their schemas live with their routes in apps/server).
 */
export function buildOpenApiDocument(options: {
  baseUrl: string;
  version: string;
  gateway?: { origin: string; operations: GatewayOperation[]; schemas?: Record<string, unknown> };
}): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: "AI Gateway API",
    description: "REST routes of the AI gateway. Errors use the nested form {error: {message, type, code}}; "
      + "status endpoints use the status form {status, message, error_code}.",
    version: options.version,
    baseUrl: options.baseUrl,
    securitySchemes: {
      session: { type: "apiKey", in: "cookie", name: SESSION_COOKIE, description: "Session cookie set by POST /api/auth/login" },
      apiKey: { type: "http", scheme: "bearer", description: "API key: Authorization: Bearer ak-..." },
      ...(options.gateway ? { anthropicApiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "API key as Anthropic's SDKs send it (/v1/messages)" } } : {}),
    },
  });
  const described = withSpecResponses(doc);
  if (options.gateway) {
    addGatewayOperations((described.paths ??= {}) as Record<string, Record<string, unknown>>, options.gateway.origin, options.gateway.operations);
    described.components = { ...described.components, schemas: { ...(described.components?.schemas ?? {}), ...(options.gateway.schemas as SchemaMap | undefined) } };
  }
  // after the gateway's operations are in: their bodies refuse NUL as every other route's (CONTRACT 7b)
  return withTextRules(described);
}
