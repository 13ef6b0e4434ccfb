import { dollarsToMicros, invalidParameter } from "@gw/shared";
import { z } from "zod";
import { adminConsole } from "../console/service";
import { decodedPathId, pathIdField } from "../path-id";
import { actorOf } from "./admin-actor";
import { adminCatalogProcedures } from "./admin-catalog";
import { adminProcedure, createTRPCRouter, sessionProcedure } from "../trpc";
import { historyEntry, historyInput, pageLimit } from "./billing";

// CONTRACT 12: the operator console. Every route needs an admin's session (adminProcedure); the work is in
// ../console/service.ts, which writes the audit log.

const tags = ["Admin"];

/** Two decimals at most, as every amount of the API (a pipe: the REST adapter leaves it uncoerced). */
const twoDecimals = (v: number) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-6;

const adjustment = z.number()
  .pipe(z.number().min(-1_000_000).max(1_000_000).refine((v) => v !== 0, { message: "must not be 0" }).refine(twoDecimals, { message: "must have at most two decimals" }))
  .meta({ description: "US dollars, signed (negative takes credits back), at most two decimals, not 0", minimum: -1_000_000, maximum: 1_000_000, multipleOf: 0.01 });

const codeAmount = z.number()
  .pipe(z.number().min(0.01).max(10_000).refine(twoDecimals, { message: "must have at most two decimals" }))
  .meta({ description: "US dollars credited per redemption, 0.01 to 10000, at most two decimals", minimum: 0.01, maximum: 10_000, multipleOf: 0.01 });

const userId = z.object({ id: pathIdField("the user's id (usr_...)") });

const userStatus = z.enum(["active", "suspended"]);

const userRow = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  plan: z.string().describe("the plan that applies (free, pro, team, ...)"),
  balance: z.number().describe("dollars"),
  spend_30d: z.number().describe("dollars charged for requests over the last 30 days"),
  status: userStatus,
  created_at: z.string().describe("ISO 8601"),
});

const subscription = z.object({
  subscription_id: z.string(),
  status: z.string(),
  current_period_start: z.string(),
  current_period_end: z.string(),
  cancel_at_period_end: z.boolean(),
  plan: z.object({ id: z.string(), name: z.string(), price: z.number(), currency: z.string(), interval: z.string() }),
});

const keyRow = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  created_at: z.string(),
  last_used: z.string().nullable(),
  usage_count: z.number().int(),
});

const codeView = z.object({
  code: z.string(),
  amount: z.number().describe("dollars per redemption"),
  max_redemptions: z.number().int(),
  redeemed: z.number().int().describe("redemptions so far"),
  expires_at: z.string().nullable().describe("ISO 8601; null: never"),
  created_at: z.string(),
});

const auditEntry = z.object({
  id: z.string(),
  actor: z.object({ user_id: z.string().nullable(), email: z.string().nullable(), via: z.enum(["api", "cli"]) }),
  action: z.string().describe("user.credit, user.suspend, user.unsuspend, user.revoke_keys, redemption_code.create, model.update, plans.update, credit_packages.update"),
  target: z.object({ type: z.enum(["user", "redemption_code", "model", "plans", "credit_packages"]), id: z.string() }),
  before: z.record(z.string(), z.unknown()).nullable(),
  after: z.record(z.string(), z.unknown()).nullable(),
  ip: z.string().nullable(),
  created_at: z.string(),
});

const limit = pageLimit;

export const adminRouter = createTRPCRouter({
  /** The dashboard asks whether to show its Admin section (tRPC only; the server refuses non-admins anyway). */
  access: sessionProcedure
    .output(z.object({ admin: z.boolean() }))
    .query(async ({ ctx }) => {
      const user = await ctx.app.auth.users.findById(ctx.principal.userId);
      return { admin: user !== null && adminConsole.isAdmin(ctx.app, user) };
    }),

  users: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/users", tags, summary: "Users, newest first, with search and paging" } })
    .input(z.object({
      query: z.string().max(200).optional().describe("a part of the e-mail or the name"),
      status: userStatus.optional(),
      limit: limit(20),
      cursor: z.string().max(200).optional().describe("next_cursor of the previous page"),
    }).optional())
    .output(z.object({ users: z.array(userRow), next_cursor: z.string().nullable() }))
    .query(({ ctx, input }) => adminConsole.listUsers(ctx.app, {
      query: input?.query?.trim() || undefined, status: input?.status, limit: input?.limit ?? 20, cursor: input?.cursor,
    })),

  user: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/users/{id}", tags, summary: "One user: balance, subscription, keys and usage" }, errors: ["not_found"] })
    .input(userId)
    .output(z.object({
      user: userRow.extend({ email_verified: z.boolean(), admin: z.boolean() }),
      balance: z.number().describe("dollars"),
      subscription: subscription.nullable(),
      keys: z.array(keyRow),
      usage_30d: z.object({
        requests: z.number().int(),
        cost: z.number().describe("dollars"),
        by_model: z.array(z.object({ model: z.string(), requests: z.number().int(), cost: z.number() })),
      }),
    }))
    .query(({ ctx, input }) => adminConsole.userDetail(ctx.app, decodedPathId(input.id))),

  ledger: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/users/{id}/ledger", tags, summary: "A user's payment history, as /api/billing/history" }, errors: ["not_found"] })
    .input(userId.extend({
      limit: historyInput.unwrap().shape.limit,
      before: historyInput.unwrap().shape.before,
    }))
    .output(z.object({ entries: z.array(historyEntry), next_before: z.number().int().nullable() }))
    .query(({ ctx, input }) => adminConsole.userLedger(ctx.app, decodedPathId(input.id), { limit: input.limit, before: input.before })),

  credit: adminProcedure
    .meta({
      openapi: { method: "POST", path: "/admin/users/{id}/credits", tags, summary: "Adjust a user's credits (an adjustment ledger entry)" },
      errors: ["not_found", "conflict"],
    })
    .input(userId.extend({ amount: adjustment, reason: z.string().trim().min(1).max(500).describe("why, for the ledger and the audit log") }))
    .output(z.object({ success: z.literal(true), amount: z.number(), balance: z.number().describe("dollars after the adjustment") }))
    .mutation(({ ctx, input }) => adminConsole.credit(ctx.app, actorOf(ctx), decodedPathId(input.id), { amount: dollarsToMicros(input.amount), reason: input.reason })),

  suspend: adminProcedure
    .meta({
      openapi: { method: "POST", path: "/admin/users/{id}/suspend", tags, summary: "Suspend: keys refused, sessions revoked, login refused" },
      errors: ["not_found", "conflict"],
    })
    .input(userId)
    .output(z.object({ success: z.literal(true), user: userRow }))
    .mutation(({ ctx, input }) => adminConsole.suspend(ctx.app, actorOf(ctx), decodedPathId(input.id))),

  unsuspend: adminProcedure
    .meta({ openapi: { method: "POST", path: "/admin/users/{id}/unsuspend", tags, summary: "Lift a suspension" }, errors: ["not_found"] })
    .input(userId)
    .output(z.object({ success: z.literal(true), user: userRow }))
    .mutation(({ ctx, input }) => adminConsole.unsuspend(ctx.app, actorOf(ctx), decodedPathId(input.id))),

  revokeKeys: adminProcedure
    .meta({ openapi: { method: "POST", path: "/admin/users/{id}/revoke-keys", tags, summary: "Revoke every API key of a user" }, errors: ["not_found"] })
    .input(userId)
    .output(z.object({ success: z.literal(true), revoked: z.number().int() }))
    .mutation(({ ctx, input }) => adminConsole.revokeKeys(ctx.app, actorOf(ctx), decodedPathId(input.id))),

  codes: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/redemption-codes", tags, summary: "Redemption codes, newest first" } })
    .input(z.object({ limit: limit(50), before: z.string().max(64).optional().describe("next_before of the previous page") }).optional())
    .output(z.object({ codes: z.array(codeView), next_before: z.string().nullable() }))
    .query(({ ctx, input }) => adminConsole.listCodes(ctx.app, { limit: input?.limit ?? 50, before: input?.before })),

  createCode: adminProcedure
    .meta({
      openapi: { method: "POST", path: "/admin/redemption-codes", tags, summary: "Create a redemption code", successDescription: "Created" },
      successStatus: 201,
      errors: ["conflict"],
    })
    .input(z.object({
      amount: codeAmount,
      max_redemptions: z.number().pipe(z.number().int().min(1).max(1_000_000)).meta({ description: "1 to 1000000", minimum: 1, maximum: 1_000_000 }),
      expires_at: z.iso.datetime({ offset: true }).optional().describe("ISO 8601, in the future; absent: never"),
      code: z.string().regex(/^[A-Za-z0-9_-]{4,64}$/, "must be 4 to 64 letters, digits, '-' or '_'").optional().describe("absent: a random 16-character code"),
    }))
    .output(codeView)
    .mutation(({ ctx, input }) => {
      const expiresAt = input.expires_at === undefined ? undefined : new Date(input.expires_at);
      if (expiresAt && expiresAt.getTime() <= ctx.app.clock.now()) throw invalidParameter("expires_at", "must be in the future");
      return adminConsole.createCode(ctx.app, actorOf(ctx), {
        amount: dollarsToMicros(input.amount), maxRedemptions: input.max_redemptions, expiresAt, code: input.code,
      });
    }),

  audit: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/audit", tags, summary: "The audit log of admin actions, newest first" } })
    .input(z.object({ limit: limit(50), before: z.string().max(64).optional().describe("next_before of the previous page") }).optional())
    .output(z.object({ entries: z.array(auditEntry), next_before: z.string().nullable() }))
    .query(({ ctx, input }) => adminConsole.audit(ctx.app, { limit: input?.limit ?? 50, before: input?.before })),

  ...adminCatalogProcedures,
});
