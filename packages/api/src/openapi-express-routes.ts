import type { ErrorCode } from "@gw/shared";

/**
 * The `/api` routes served by Express rather than generated from the routers (the credits route's flat errors, the
 * webhook's raw body, the OAuth redirects, DELETE /api/auth/me's JSON body, the gateway's usage API), described by hand
 * so that the document lists every REST route. `errors` are rendered like a procedure's.
 */
export interface ExpressOperation {
  path: string;
  method: "get" | "post" | "delete";
  operation: Record<string, unknown>;
  auth: "none" | "session" | "sessionOrKey";
  errors: ErrorCode[];
}

const json = (schema: Record<string, unknown>) => ({ "application/json": { schema } });
const redirect = (description: string) => ({
  description,
  headers: { Location: { schema: { type: "string" }, description: "where the browser goes next" } },
});
const flatError = (description: string) => ({ description, content: json({ $ref: "#/components/schemas/FlatError" }) });
const nestedError = (description: string) => ({ description, content: json({ $ref: "#/components/schemas/NestedError" }) });
const integer = { type: "integer" };
const usageSums = {
  requests: integer, cost: { type: "number", description: "dollars" }, prompt_tokens: integer, completion_tokens: integer,
  total_tokens: integer, characters: integer, audio_seconds: integer, images: integer,
};
const sumsWith = (key: string) => ({ type: "object", required: [key, ...Object.keys(usageSums)], properties: { [key]: { type: "string" }, ...usageSums } });
const usageRecord = {
  type: "object",
  properties: {
    id: { type: "string" }, request_id: { type: "string" }, created_at: { type: "string", format: "date-time" },
    endpoint: { type: "string" }, model: { type: "string" },
    type: { type: "string", enum: ["text", "embedding", "image", "tts", "sts", "stt"] }, key_id: { type: ["string", "null"] },
    prompt_tokens: integer, completion_tokens: integer, total_tokens: integer, characters: integer, audio_seconds: integer,
    images: integer, processing_ms: integer, output_bytes: integer, cost: { type: "number", description: "dollars" },
    status: { type: "string", enum: ["success", "partial"] },
  },
};
const success = { type: "object", required: ["success", "message"], properties: { success: { type: "boolean" }, message: { type: "string" } } };

export const EXPRESS_OPERATIONS: ExpressOperation[] = [
  {
    path: "/usage",
    method: "get",
    auth: "sessionOrKey",
    errors: ["invalid_parameter", "unauthorized", "session_expired", "invalid_api_key", "key_expired", "ip_not_allowed", "rate_limit_exceeded", "internal_error"],
    operation: {
      operationId: "usage-list",
      summary: "Usage records with pagination and totals, newest first (limit `usage`, not the plan's requests per minute)",
      tags: ["Usage"],
      parameters: [
        { name: "page", in: "query", schema: { type: "integer", minimum: 1, maximum: 100_000, default: 1 } },
        { name: "per_page", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 50 } },
        { name: "from", in: "query", schema: { type: "string", description: "ISO 8601 date or date-time; default 30 days before `to`" } },
        { name: "to", in: "query", schema: { type: "string", description: "ISO 8601, exclusive (a date alone includes that day); at most 366 days after `from`" } },
        { name: "model", in: "query", schema: { type: "string", minLength: 1, maxLength: 100 } },
        { name: "key_id", in: "query", schema: { type: "string", minLength: 1, maxLength: 100, description: "records of this API key" } },
        { name: "endpoint", in: "query", schema: { type: "string", minLength: 1, maxLength: 100, description: "records of this route, e.g. /v1/chat/completions" } },
        { name: "status", in: "query", schema: { type: "string", enum: ["success", "partial"] } },
        { name: "format", in: "query", schema: { type: "string", enum: ["json", "csv"], description: "csv (or `Accept: text/csv`): every record of the range, no pagination" } },
      ],
      responses: {
        200: {
          description: "OK",
          content: {
            ...json({
            type: "object",
            required: ["object", "data", "pagination", "range", "totals"],
            properties: {
              object: { type: "string", const: "list" },
              data: { type: "array", items: usageRecord },
              pagination: { type: "object", required: ["page", "per_page", "total", "total_pages"], properties: { page: integer, per_page: integer, total: integer, total_pages: integer } },
              range: { type: "object", required: ["from", "to"], properties: { from: { type: "string", format: "date-time" }, to: { type: "string", format: "date-time" } } },
              totals: {
                type: "object",
                required: [...Object.keys(usageSums), "by_day", "by_model", "by_key"],
                properties: {
                  ...usageSums, by_day: { type: "array", items: sumsWith("date") }, by_model: { type: "array", items: sumsWith("model") },
                  by_key: {
                    type: "array",
                    items: { type: "object", required: ["key_id", ...Object.keys(usageSums)], properties: { key_id: { type: ["string", "null"], description: "null: session requests" }, ...usageSums } },
                  },
                },
              },
            },
            }),
            "text/csv": { schema: { type: "string", description: "a header row of the record's field names, then one row per record, newest first" } },
          },
        },
        // a gateway route: the database outage is answered in the nested form (docs/api.md)
        503: nestedError("service_unavailable"),
      },
    },
  },
  {
    path: "/billing/credits",
    method: "get",
    auth: "sessionOrKey",
    errors: ["rate_limit_exceeded"],
    operation: {
      operationId: "billing-credits",
      summary: "Credit balance (SPEC 2.8); errors 401 and 500 in the flat form {error}",
      tags: ["Billing"],
      responses: {
        200: {
          description: "OK",
          content: json({
            type: "object",
            required: ["balance", "currency"],
            properties: { balance: { type: "number", description: "dollars" }, currency: { type: "string", const: "USD" } },
          }),
        },
        401: flatError("Unauthorized"),
        500: flatError("Internal server error"),
      },
    },
  },
  {
    path: "/billing/webhook",
    method: "post",
    auth: "none",
    errors: ["missing_required_parameter", "invalid_parameter", "payload_too_large", "service_unavailable", "internal_error"],
    operation: {
      operationId: "billing-webhook",
      summary: "Stripe events (signed; called by the payment processor)",
      tags: ["Billing"],
      parameters: [{ name: "Stripe-Signature", in: "header", required: true, schema: { type: "string" } }],
      requestBody: { required: true, content: json({ type: "object", description: "a Stripe event, verified over the raw body" }) },
      responses: {
        200: { description: "OK (also for duplicates, unknown types and ignored events)", content: json({ type: "object", required: ["received"], properties: { received: { type: "boolean", const: true } } }) },
      },
    },
  },
  {
    path: "/auth/me",
    method: "delete",
    auth: "session",
    errors: ["missing_required_parameter", "invalid_parameter", "invalid_json", "invalid_credentials", "unauthorized", "session_expired",
      "csrf_rejected", "payload_too_large", "unsupported_media_type", "auth_rate_limit", "service_unavailable", "internal_error"],
    operation: {
      operationId: "auth-deleteAccount",
      summary: "Delete the account (SPEC 3): keys and sessions revoked, subscription cancelled, data anonymized",
      tags: ["Accounts"],
      requestBody: {
        required: false,
        content: json({ type: "object", properties: { password: { type: "string", maxLength: 1024, description: "omitted for OAuth-only accounts" } } }),
      },
      responses: { 200: { description: "OK; the session cookie is cleared", content: json(success) } },
    },
  },
  {
    path: "/auth/oauth/{provider}",
    method: "get",
    auth: "none",
    errors: [],
    operation: {
      operationId: "auth-oauthStart",
      summary: "Start an OAuth sign-in",
      tags: ["Accounts"],
      parameters: [{ name: "provider", in: "path", required: true, schema: { type: "string", enum: ["google", "github"] } }],
      responses: { 302: redirect("to the provider (state, PKCE S256), or to /login?error=<code>") },
    },
  },
  {
    path: "/auth/callback",
    method: "get",
    auth: "none",
    errors: [],
    operation: {
      operationId: "auth-oauthCallback",
      summary: "OAuth provider redirect (SPEC 4.6)",
      tags: ["Accounts"],
      parameters: [
        { name: "code", in: "query", required: true, schema: { type: "string" } },
        { name: "state", in: "query", required: true, schema: { type: "string" } },
      ],
      responses: { 302: redirect("to /dashboard with the session cookie set, or to /login?error=<code>") },
    },
  },
];
