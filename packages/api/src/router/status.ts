import { AppError } from "@gw/shared";
import { z } from "zod";
import { databaseServes } from "../status/database-check";
import { createTRPCRouter, publicProcedure, rateLimit } from "../trpc";
import type { ApiContext } from "../trpc";

// SPEC 4.9, CONTRACT 8. No authentication. Basic status is never cached; external status is cached 30 s.

const statusOutput = z.object({ status: z.literal("ok"), message: z.string() });

const healthEntry = z.object({
  status: z.enum(["healthy", "degraded", "unhealthy", "unknown"]),
  response_time: z.number().int().describe("milliseconds"),
  last_check: z.string().describe("ISO 8601"),
  issue: z.string().optional(),
});

export const deploymentEntry = z.object({
  model: z.string(),
  deployment: z.string().describe("the deployment's id in the models config; `default` for a model without a deployments list"),
  status: z.enum(["healthy", "cooling_down", "rate_limited"]).describe("cooling_down: skipped after a 429, 5xx, timeout or connection error; rate_limited: at its requestsPerMinute"),
  cooling_until: z.string().optional().describe("ISO 8601, while cooling down"),
});

const externalOutput = z.object({
  status: z.enum(["ok", "degraded", "error"]).describe("ok when overall_status is healthy"),
  services: z.record(z.string(), healthEntry).describe("database, text_provider, speech_provider, payment_provider"),
  overall_status: z.enum(["healthy", "degraded", "unhealthy", "unknown"]),
  timestamp: z.string().describe("ISO 8601 time of the (cached) check"),
  deployments: z.array(deploymentEntry).describe("CONTRACT 13: each configured upstream deployment of each model, as this instance sees it now (not cached)"),
});

async function basicStatus(ctx: ApiContext): Promise<z.infer<typeof statusOutput>> {
  ctx.res.setHeader("Cache-Control", "no-store");
  if (!(await databaseServes(ctx.app.db))) {
    throw new AppError("service_unavailable", "Service temporarily unavailable: the database is unreachable.");
  }
  return { status: "ok", message: "AI Gateway is running." };
}

const statusProcedure = publicProcedure.use(rateLimit("status", "ip")).output(statusOutput);
const tags = ["Status"];

export const statusRouter = createTRPCRouter({
  get: statusProcedure
    .meta({ openapi: { method: "GET", path: "/status", tags, protect: false, summary: "Service status (503 in the status form when the database is unreachable)" }, errors: ["service_unavailable"] })
    .query(({ ctx }) => basicStatus(ctx)),

  example: statusProcedure
    .meta({ openapi: { method: "GET", path: "/example", tags, protect: false, summary: "Same answer as GET /api/status" }, errors: ["service_unavailable"] })
    .query(({ ctx }) => basicStatus(ctx)),

  examplePost: statusProcedure
    .meta({ openapi: { method: "POST", path: "/example", tags, protect: false, summary: "Same answer as GET /api/status" }, errors: ["service_unavailable"] })
    .mutation(({ ctx }) => basicStatus(ctx)),

  external: publicProcedure
    .use(rateLimit("statusExternal", "ip"))
    .meta({ openapi: { method: "GET", path: "/status/external", tags, protect: false, summary: "Health of dependencies (cached 30 s)" } })
    .output(externalOutput)
    .query(async ({ ctx }) => {
      const report = await ctx.app.healthChecks.report();
      const maxAge = Math.max(0, Math.floor((report.expiresAt - ctx.app.clock.now()) / 1000));
      ctx.res.setHeader("Cache-Control", `public, max-age=${maxAge}`);
      const status = report.overall_status === "unhealthy" ? "error" : report.overall_status === "degraded" ? "degraded" : "ok";
      return { status, services: report.services, overall_status: report.overall_status, timestamp: report.timestamp, deployments: ctx.app.healthChecks.deployments() };
    }),
});
