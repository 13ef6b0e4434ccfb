import { z } from "zod";
import { invalidParameter } from "@gw/shared";
import { displayName } from "../display-name";
import { createTRPCRouter, rateLimit, sessionProcedure, verifiedSessionProcedure } from "../trpc";

// SPEC 2.4 / 4.8, CONTRACT 3. Key management needs a session; an API key alone gets 401 unauthorized.

const createKeyInput = z.object({
  // the same rule as account names: a line break or escape sequence in a name breaks lists, logs and terminals
  name: displayName(100).describe("Human-readable name, 1 to 100 characters, no control characters"),
  description: z.string().trim().max(500).optional().describe("Optional purpose text, at most 500 characters"),
});

const createdKey = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().describe("empty string when none was given"),
  key: z.string().describe("the full secret: shown only in this response"),
  prefix: z.string().describe("first 12 characters of the key"),
  created_at: z.string().describe("ISO 8601"),
  status: z.literal("active"),
});

const listedKey = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  created_at: z.string().describe("ISO 8601"),
  last_used: z.string().nullable().describe("ISO 8601; null when the key was never used"),
  usage_count: z.number().int(),
  status: z.literal("active"),
});

const keyIdInput = z.object({ id: z.string().min(1).max(100).describe("the key's id (key_...)") });

/**
 * The REST adapter hands path parameters over still percent-encoded; `key%5Fabc` is the same URL as `key_abc`
 * (RFC 3986 6.2.2.2). Key ids are `key_` and base62, so decoding never changes an id the dashboard sends over tRPC.
 */
function decodedKeyId(id: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(id);
  } catch {
    throw invalidParameter("id", "malformed percent-encoding");
  }
  // CONTRACT 7b: a NUL (%00) is refused as in any body field, not looked up
  if (decoded.includes("\u0000")) throw invalidParameter("id", "must not contain NUL characters");
  return decoded;
}

export const keysRouter = createTRPCRouter({
  list: sessionProcedure
    .use(rateLimit("keysList", "user"))
    .meta({ openapi: { method: "GET", path: "/keys", tags: ["API keys"], summary: "List active API keys, newest first" } })
    .output(z.object({ keys: z.array(listedKey), total: z.number().int() }))
    .query(async ({ ctx }) => {
      const keys = await ctx.app.apiKeys.listActive(ctx.principal.userId);
      return {
        keys: keys.map((k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          created_at: k.createdAt.toISOString(),
          last_used: k.lastUsedAt?.toISOString() ?? null,
          usage_count: k.usageCount,
          status: "active" as const,
        })),
        total: keys.length,
      };
    }),

  create: verifiedSessionProcedure
    .use(rateLimit("keysCreate", "user"))
    .meta({
      openapi: { method: "POST", path: "/keys", tags: ["API keys"], summary: "Create an API key (needs a verified e-mail)", successDescription: "Created" },
      successStatus: 201,
      errors: ["email_not_verified"],
    })
    .input(createKeyInput)
    .output(createdKey)
    .mutation(async ({ ctx, input }) => {
      const { sessionId } = ctx.principal;
      const stillAuthorized = sessionId === undefined ? undefined : () => ctx.app.sessions.isActive(sessionId);
      const created = await ctx.app.apiKeys.create(ctx.principal.userId, { name: input.name, description: input.description }, stillAuthorized);
      return {
        id: created.id,
        name: created.name,
        description: created.description,
        key: created.key,
        prefix: created.prefix,
        created_at: created.createdAt.toISOString(),
        status: "active" as const,
      };
    }),

  revoke: sessionProcedure
    .use(rateLimit("keysDelete", "user"))
    .meta({ openapi: { method: "DELETE", path: "/keys/{id}", tags: ["API keys"], summary: "Revoke an API key (permanent)" }, errors: ["key_not_found"] })
    .input(keyIdInput)
    .output(z.object({ success: z.boolean(), message: z.string(), id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const id = decodedKeyId(input.id);
      await ctx.app.apiKeys.revoke(ctx.principal.userId, id);
      return { success: true, message: "API key revoked.", id };
    }),
});
