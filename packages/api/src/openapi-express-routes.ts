import type { ErrorCode } from "@gw/shared";
import { z } from "zod";
import { usageAnswerSchema, usageQuerySchema } from "./usage/schemas";

/**
 * The `/api` routes served by Express rather than generated from the routers (the credits route's flat errors, the
 * webhook's raw body, the OAuth redirects, DELETE /api/auth/me's JSON body, the gateway's usage API), described here so
 * that the document lists every REST route; the usage API's query and answer come from its zod schemas
 * (usage/schemas.ts). `errors` are rendered like a procedure's.
 */
export interface ExpressOperation {
  path: string;
  method: "get" | "post" | "delete";
  operation: Record<string, unknown>;
  auth: "none" | "session" | "sessionOrKey";
  errors: ErrorCode[];
}

const json = (schema: Record<string, unknown>) => ({ "application/json": { schema } });
/**
 * The JSON Schema of a zod schema as the wire carries it: a query field's input, an answer's output. A field whose
 * meta names a `type` (a count written as text in the query, an integer to a client) is described by its meta alone.
 */
function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...described } = z.toJSONSchema(schema, {
    io,
    override: ({ zodSchema, jsonSchema }) => {
      const meta = z.globalRegistry.get(zodSchema);
      if (meta?.type === undefined) return;
      for (const key of Object.keys(jsonSchema)) delete (jsonSchema as Record<string, unknown>)[key];
      Object.assign(jsonSchema, meta);
    },
  });
  return described;
}
const queryParameters = (schema: z.ZodObject) =>
  Object.entries(schema.shape).map(([name, field]) => ({ name, in: "query", schema: jsonSchemaOf(field as z.ZodType, "input") }));
const redirect = (description: string) => ({
  description,
  headers: { Location: { schema: { type: "string" }, description: "where the browser goes next" } },
});
const flatError = (description: string) => ({ description, content: json({ $ref: "#/components/schemas/FlatError" }) });
const nestedError = (description: string) => ({ description, content: json({ $ref: "#/components/schemas/NestedError" }) });
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
      parameters: queryParameters(usageQuerySchema),
      responses: {
        200: {
          description: "OK",
          content: {
            ...json(jsonSchemaOf(usageAnswerSchema, "output")),
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
      parameters: [{ name: "Stripe-Signature", in: "header", required: true, schema: { type: "string", minLength: 1 }, description: "t=<unix seconds>,v1=<HMAC-SHA256>; its time within 300 s of now" }],
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
      // any other provider is the browser's to see: a redirect to the login page naming the error, not a 4xx
      parameters: [{ name: "provider", in: "path", required: true, schema: { type: "string", examples: ["google", "github"] }, description: "google or github" }],
      responses: { 302: redirect("to the provider (state, PKCE S256), or to /login?error=<code> (unsupported_provider for another name)") },
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
      // the provider's redirect: without a code (the user declined: `error`) or a state it is still a redirect
      parameters: [
        { name: "code", in: "query", schema: { type: "string" }, description: "the authorization code (required for a sign-in)" },
        { name: "state", in: "query", schema: { type: "string" }, description: "the state token (required for a sign-in)" },
      ],
      responses: { 302: redirect("to /dashboard with the session cookie set, or to /login?error=<code> (a missing code or state included)") },
    },
  },
];
