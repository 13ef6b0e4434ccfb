import { adminRouter } from "./router/admin";
import { authRouter } from "./router/auth";
import { billingRouter } from "./router/billing";
import { keysRouter } from "./router/keys";
import { statusRouter } from "./router/status";
import { usageRouter } from "./router/usage";
import { createTRPCRouter } from "./trpc";

/**
 * Every router of the API. Adding one is one import and one key; REST paths come from each procedure's
 * `meta.openapi.path`, relative to /api.
 */
export const appRouter = createTRPCRouter({
  admin: adminRouter,
  auth: authRouter,
  billing: billingRouter,
  keys: keysRouter,
  status: statusRouter,
  usage: usageRouter,
});

/** The dashboard's tRPC client is typed by this. */
export type AppRouter = typeof appRouter;
