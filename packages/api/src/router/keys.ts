import { z } from "zod";
import { NO_CONTROLS } from "@gw/auth";
import { AppError } from "@gw/shared";
import { displayName } from "../display-name";
import { decodedPathId, pathIdField } from "../path-id";
import { createTRPCRouter, rateLimit, sessionOrKeyProcedure, sessionProcedure, verifiedSessionProcedure } from "../trpc";
import { controlsBody, keyBodies, keyBody, keyControlsInput, keyControlsOutput, keyDetails, resolveControls } from "./key-controls";

// SPEC 2.4 / 4.8, CONTRACT 3. Key management needs a session; an API key alone gets 401 unauthorized.

const createKeyInput = z.object({
  // the same rule as account names: a line break or escape sequence in a name breaks lists, logs and terminals
  name: displayName(100).describe("Human-readable name, 1 to 100 characters, no control characters"),
  description: z.string().trim().max(500).optional().describe("Optional purpose text, at most 500 characters"),
  ...keyControlsInput,
});

const createdKey = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().describe("empty string when none was given"),
  key: z.string().describe("the full secret: shown only in this response"),
  prefix: z.string().describe("first 12 characters of the key"),
  created_at: z.string().describe("ISO 8601"),
  status: z.literal("active"),
  ...keyControlsOutput,
});

const keyIdInput = z.object({ id: pathIdField("the key's id (key_...)") });

const updateKeyInput = keyIdInput.extend(keyControlsInput);

const MAX_GRACE_SECONDS = 86_400;
const rotateKeyInput = keyIdInput.extend({
  grace_seconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).optional()
    .describe(`how long the old secret keeps working, 0 to ${MAX_GRACE_SECONDS} seconds; default 0 (refused at once)`),
});

const rotatedKey = keyDetails.extend({ key: z.string().describe("the new secret: shown only in this response") });

export const keysRouter = createTRPCRouter({
  list: sessionProcedure
    .use(rateLimit("keysList", "user"))
    .meta({ openapi: { method: "GET", path: "/keys", tags: ["API keys"], summary: "List active API keys, newest first" } })
    .output(z.object({ keys: z.array(keyDetails), total: z.number().int() }))
    .query(async ({ ctx }) => {
      const { userId } = ctx.principal;
      const totals = ctx.app.keySpend.totals(userId); // read beside the keys: it does not depend on them
      const [keys] = await Promise.all([ctx.app.apiKeys.listActive(userId), totals]);
      return { keys: await keyBodies(ctx.app, userId, keys, totals), total: keys.length };
    }),

  get: sessionProcedure
    .use(rateLimit("keysList", "user"))
    .meta({ openapi: { method: "GET", path: "/keys/{id}", tags: ["API keys"], summary: "One active API key with its controls and spend" }, errors: ["key_not_found"] })
    .input(keyIdInput)
    .output(keyDetails)
    .query(async ({ ctx, input }) => {
      const key = await ctx.app.apiKeys.get(ctx.principal.userId, decodedPathId(input.id));
      return keyBody(ctx.app, ctx.principal.userId, key);
    }),

  update: sessionProcedure
    .use(rateLimit("keysUpdate", "user"))
    .meta({
      openapi: { method: "PATCH", path: "/keys/{id}", tags: ["API keys"], summary: "Change an API key's controls (fields left out keep their value, null clears)" },
      errors: ["key_not_found"],
    })
    .input(updateKeyInput)
    .output(keyDetails)
    .mutation(async ({ ctx, input }) => {
      const { userId } = ctx.principal;
      const id = decodedPathId(input.id);
      const current = await ctx.app.apiKeys.get(userId, id);
      const controls = await resolveControls(ctx.app, userId, current.controls, input);
      const updated = await ctx.app.apiKeys.updateControls(userId, id, controls);
      return keyBody(ctx.app, userId, updated);
    }),

  rotate: sessionProcedure
    .use(rateLimit("keysUpdate", "user"))
    .meta({
      openapi: { method: "POST", path: "/keys/{id}/rotate", tags: ["API keys"], summary: "Give an API key a new secret (same id and controls)", successDescription: "Created" },
      successStatus: 201,
      errors: ["key_not_found", "conflict"],
    })
    .input(rotateKeyInput)
    .output(rotatedKey)
    .mutation(async ({ ctx, input }) => {
      const { userId } = ctx.principal;
      const rotated = await ctx.app.apiKeys.rotate(userId, decodedPathId(input.id), input.grace_seconds ?? 0);
      return { ...(await keyBody(ctx.app, userId, rotated)), key: rotated.key };
    }),

  current: sessionOrKeyProcedure
    .use(rateLimit("keysList", "user"))
    .meta({ openapi: { method: "GET", path: "/v1/key", tags: ["API keys"], summary: "The API key this request authenticates with (never its secret)" } })
    .output(keyDetails)
    .query(async ({ ctx }) => {
      const { userId, keyId, key } = ctx.principal;
      if (keyId === undefined || key === undefined) throw new AppError("unauthorized", "This endpoint takes an API key: send 'Authorization: Bearer <API_KEY>'.");
      return keyBody(ctx.app, userId, await ctx.app.apiKeys.get(userId, keyId));
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
      const { sessionId, userId } = ctx.principal;
      const controls = await resolveControls(ctx.app, userId, NO_CONTROLS, input);
      const stillAuthorized = sessionId === undefined ? undefined : () => ctx.app.sessions.isActive(sessionId);
      const created = await ctx.app.apiKeys.create(userId, { name: input.name, description: input.description, controls }, stillAuthorized);
      return {
        id: created.id,
        name: created.name,
        description: created.description,
        key: created.key,
        prefix: created.prefix,
        created_at: created.createdAt.toISOString(),
        status: "active" as const,
        ...controlsBody(created.controls),
      };
    }),

  revoke: sessionProcedure
    .use(rateLimit("keysDelete", "user"))
    .meta({ openapi: { method: "DELETE", path: "/keys/{id}", tags: ["API keys"], summary: "Revoke an API key (permanent)" }, errors: ["key_not_found"] })
    .input(keyIdInput)
    .output(z.object({ success: z.boolean(), message: z.string(), id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const id = decodedPathId(input.id);
      await ctx.app.apiKeys.revoke(ctx.principal.userId, id);
      return { success: true, message: "API key revoked.", id };
    }),
});
