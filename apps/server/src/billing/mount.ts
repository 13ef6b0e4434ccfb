import express, { type Express } from "express";
import { statusFormUnavailable } from "../api/rest-errors";
import type { AppContext } from "../context";
import { noStore } from "../http/no-store";
import { creditsRoute } from "./credits-route";
import { registerBillingHooks } from "./hooks";
import { webhookRoute } from "./webhook-route";

/** Billing's Express routes. Mounted first: the webhook needs the raw body, before any JSON parser runs. */
export async function mountBilling(app: Express, ctx: AppContext): Promise<void> {
  // Any content type is read raw: the signature check, not the header, decides what is accepted.
  // mounted before /api's no-store, which every answer here (errors included) needs as well
  app.post("/api/billing/webhook", noStore, express.raw({ type: () => true, limit: "1mb" }), webhookRoute(ctx), statusFormUnavailable(ctx.config.errorDebug));
  app.get("/api/billing/credits", noStore, creditsRoute(ctx));
  registerBillingHooks(ctx);
}
