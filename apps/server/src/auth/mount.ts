import type { Express } from "express";
import type { MethodRules } from "../api/method-not-allowed";
import type { AppContext } from "../context";
import { deleteAccountRoute } from "./delete-account-route";
import { oauthRoutes } from "./oauth-routes";

/** The account routes tRPC cannot serve well (redirects, DELETE with a body); mounted before the REST adapter. */
export function mountAuthRoutes(app: Express, ctx: AppContext, methods: MethodRules): void {
  app.use(oauthRoutes(ctx, methods));
  app.use(deleteAccountRoute(ctx, methods));
}
