import { noCredentials, gatewayPrincipal } from "../gateway-principal";
import { createTRPCRouter, publicProcedure } from "../trpc";
import { countUsageRead, usageFilter, usagePage } from "../usage/read";
import { usageQuerySchema } from "../usage/schemas";

/**
 * The usage API's procedure (the dashboard's client): GET /api/usage's JSON answer, read by the same functions, with
 * the same credentials (session or key, as that route takes them) and the same `usage` limit. No OpenAPI meta: the
 * REST face is the Express route, which also answers CSV.
 */
const usageReader = publicProcedure.use(async ({ ctx, next }) => {
  const principal = await gatewayPrincipal(ctx.app.credentials, ctx.req, noCredentials);
  await countUsageRead(ctx.app.limits, ctx.res, principal.userId);
  return next({ ctx: { ...ctx, principal } });
}).meta({ auth: "sessionOrKey" });

export const usageRouter = createTRPCRouter({
  /** The caller's records, newest first, a page at a time, with the range's totals by day, model and key. */
  list: usageReader.input(usageQuerySchema).query(async ({ ctx, input }) =>
    usagePage(ctx.app.usage, await usageFilter(ctx.app, ctx.principal.userId, input), input)),
});
