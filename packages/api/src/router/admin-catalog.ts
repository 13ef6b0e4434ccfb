import { invalidParameter } from "@gw/shared";
import { z } from "zod";
import { catalogEdits, shown } from "../catalog/edits";
import { overview } from "../console/overview";
import { adminProcedure, type ApiContext } from "../trpc";
import { decodedPathId } from "../path-id";
import { actorOf } from "./admin-actor";
import { deploymentEntry } from "./status";

// CONTRACT 12: the catalog at run time (models, plans, credit packages) and the overview in the operator console.
// Each catalog edit names the version it was made on (`version` in the body, or `If-Match`); a stale one is 409.

const tags = ["Admin"];

const price = z.number().optional();
const pricing = z.object({
  inputPer1k: price, outputPer1k: price, imageStandard: price, imageHighRes: price, per1kChars: price, perMinute: price,
}).describe("micro-dollars (1 USD = 1000000), whole numbers");

const deployment = z.object({
  id: z.string(),
  baseUrl: z.string(),
  apiKey: z.string(),
  weight: z.number(),
  upstreamModel: z.string().optional(),
  requestsPerMinute: z.number().int().optional(),
});

const model = z.object({
  id: z.string(),
  enabled: z.boolean().describe("a disabled model is refused as an unknown one and absent from /v1/models"),
  type: z.enum(["text", "embedding", "image", "speech"]),
  provider: z.string(),
  protocol: z.string(),
  upstreamModel: z.string().optional(),
  versions: z.record(z.string(), z.string()).optional(),
  contextWindow: z.number().int().optional(),
  maxOutputTokens: z.number().int().optional(),
  pricing,
  ownedBy: z.string(),
  baseUrl: z.string().optional(),
  apiKey: z.string().optional(),
  deployments: z.array(deployment).optional(),
  fallbacks: z.array(z.string()).optional(),
});

const plan = z.object({
  id: z.string(), name: z.string(), price: z.number().describe("dollars per month"), currency: z.string(), interval: z.literal("month"),
  features: z.array(z.string()), monthlyCreditsMicros: z.number().int(), requestsPerMinute: z.number().int(), concurrentRequests: z.number().int(),
  stripePriceId: z.string().optional(),
});

const creditPackage = z.object({ amount: z.number().describe("dollars paid"), bonus: z.number().describe("dollars granted on top"), total: z.number() });

const version = z.number().pipe(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)).optional()
  .meta({ description: "the catalog version the edit was made on (from the GET); a newer one exists: 409 conflict. Or send If-Match", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, multipleOf: 1 });

const catalogVersion = z.number().int().describe("the catalog version read or written");

/** `version`, else the If-Match header (`"3"`, `3` or `W/"3"`), else none (the newest version is edited). */
function expectedVersion(ctx: ApiContext, body: number | undefined): number | undefined {
  if (body !== undefined) return body;
  const header = ctx.req.headers["if-match"];
  if (header === undefined || header === "*") return undefined;
  const match = /^(?:W\/)?"?(\d{1,15})"?$/.exec(header.trim());
  if (!match) throw invalidParameter("If-Match", "must be a catalog version, e.g. \"3\"");
  return Number(match[1]);
}

const modelId = z.string().min(1).max(200).describe("the model's id");

const DAY_MS = 86_400_000;
/** the longest range one overview reads (it passes over every ledger entry of the range) */
const MAX_OVERVIEW_DAYS = 92;

const overviewOutput = z.object({
  from: z.string(), to: z.string(),
  revenue: z.object({
    payments: z.number().describe("dollars paid for credit purchases"), refunds: z.number().describe("dollars refunded of them"), net: z.number(),
    by_day: z.array(z.object({ day: z.string().describe("UTC, YYYY-MM-DD"), payments: z.number(), refunds: z.number(), net: z.number() })),
  }),
  credits: z.object({
    granted: z.number().describe("dollars of credits added: purchases, bonuses, plan credits, adjustments, redemptions"),
    taken_back: z.number().describe("dollars taken back: refunds, disputes, negative adjustments"),
    consumed: z.number().describe("dollars charged for requests"),
  }),
  models: z.array(z.object({
    model: z.string(), requests: z.number().int().describe("charged requests"), errors: z.number().int().describe("streams cut after output began (charged in part)"),
    avg_latency_ms: z.number().int(), spend: z.number().describe("dollars"),
  })),
  top_accounts: z.array(z.object({ user_id: z.string(), email: z.string().nullable(), spend: z.number().describe("dollars"), requests: z.number().int() })),
});

export const adminCatalogProcedures = {
  overview: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/overview", tags, summary: "Revenue by day, credits granted and consumed, requests by model, top accounts" } })
    .input(z.object({
      from: z.iso.datetime({ offset: true }).optional().describe("ISO 8601, inclusive; default: 30 days before `to`"),
      to: z.iso.datetime({ offset: true }).optional().describe("ISO 8601, exclusive; default: now"),
    }).optional())
    .output(overviewOutput)
    .query(({ ctx, input }) => {
      const to = input?.to ? new Date(input.to) : new Date(ctx.app.clock.now());
      const from = input?.from ? new Date(input.from) : new Date(to.getTime() - 30 * DAY_MS);
      if (from.getTime() >= to.getTime()) throw invalidParameter("from", "must be before `to`");
      if (to.getTime() - from.getTime() > MAX_OVERVIEW_DAYS * DAY_MS) throw invalidParameter("from", `the range is at most ${MAX_OVERVIEW_DAYS} days`);
      return overview(ctx.app, { from, to, top: 10 });
    }),


  models: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/models", tags, summary: "The model catalog in force, disabled models included" } })
    .input(z.object({}).optional())
    .output(z.object({
      version: catalogVersion,
      models: z.array(model),
      deployments: z.array(deploymentEntry).describe("CONTRACT 13: each deployment's state as this instance sees it now, as /api/status/external shows it"),
    }))
    .query(({ ctx }) => {
      const snapshot = ctx.app.catalog.snapshot();
      return { version: snapshot.version, models: snapshot.models.map(shown), deployments: ctx.app.healthChecks.deployments() };
    }),

  model: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/models/{id}", tags, summary: "One model of the catalog" }, errors: ["not_found"] })
    .input(z.object({ id: modelId }))
    .output(z.object({ version: catalogVersion, model }))
    .query(({ ctx, input }) => catalogEdits.model(ctx.app, decodedPathId(input.id))),

  updateModel: adminProcedure
    .meta({
      openapi: { method: "PATCH", path: "/admin/models/{id}", tags, summary: "Edit a model: enabled, prices, upstream model, deployments, fallbacks" },
      errors: ["not_found", "conflict"],
    })
    .input(z.strictObject({
      id: modelId,
      version,
      enabled: z.boolean().optional(),
      upstreamModel: z.string().optional(),
      pricing: pricing.strict().optional(),
      contextWindow: z.number().optional(),
      maxOutputTokens: z.number().optional(),
      ownedBy: z.string().optional(),
      deployments: z.array(z.strictObject({
        id: z.string(), baseUrl: z.string(), apiKey: z.string().optional(), weight: z.number().optional(),
        upstreamModel: z.string().optional(), requestsPerMinute: z.number().optional(),
      })).optional().describe("replaces the model's deployments (CONTRACT 13); a deployment without apiKey, or with the key as shown (…abcd), keeps its id's key"),
      fallbacks: z.array(z.string()).optional().describe("model ids of the same type, tried in order"),
    }))
    .output(z.object({ version: catalogVersion, model }))
    .mutation(({ ctx, input }) => {
      const { id, version: bodyVersion, ...edit } = input;
      return catalogEdits.patchModel(ctx.app, actorOf(ctx), decodedPathId(id), edit, expectedVersion(ctx, bodyVersion));
    }),

  plans: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/plans", tags, summary: "The subscription plans in force" } })
    .input(z.object({}).optional())
    .output(z.object({ version: catalogVersion, plans: z.array(plan) }))
    .query(({ ctx }) => {
      const snapshot = ctx.app.catalog.snapshot();
      return { version: snapshot.version, plans: snapshot.plans };
    }),

  setPlans: adminProcedure
    .meta({ openapi: { method: "PUT", path: "/admin/plans", tags, summary: "Replace the plans (the whole list, as CONFIG_FILE's plans)" }, errors: ["conflict"] })
    .input(z.strictObject({ version, plans: z.array(z.record(z.string(), z.unknown())).describe("every plan, in CONFIG_FILE's format") }))
    .output(z.object({ version: catalogVersion, plans: z.array(plan) }))
    .mutation(({ ctx, input }) => catalogEdits.setPlans(ctx.app, actorOf(ctx), input.plans, expectedVersion(ctx, input.version))),

  creditPackages: adminProcedure
    .meta({ openapi: { method: "GET", path: "/admin/credit-packages", tags, summary: "The credit packages in force" } })
    .input(z.object({}).optional())
    .output(z.object({ version: catalogVersion, credit_packages: z.array(creditPackage) }))
    .query(({ ctx }) => {
      const snapshot = ctx.app.catalog.snapshot();
      return { version: snapshot.version, credit_packages: snapshot.creditPackages };
    }),

  setCreditPackages: adminProcedure
    .meta({ openapi: { method: "PUT", path: "/admin/credit-packages", tags, summary: "Replace the credit packages (the whole list)" }, errors: ["conflict"] })
    .input(z.strictObject({ version, credit_packages: z.array(z.record(z.string(), z.unknown())).describe("every package: {amount, bonus, total} in dollars") }))
    .output(z.object({ version: catalogVersion, credit_packages: z.array(creditPackage) }))
    .mutation(({ ctx, input }) => catalogEdits.setCreditPackages(ctx.app, actorOf(ctx), input.credit_packages, expectedVersion(ctx, input.version))),
};
