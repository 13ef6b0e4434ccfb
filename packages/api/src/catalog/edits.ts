import { catalogSchemas, type CreditPackage, type PlanDefinition } from "@gw/config";
import { AppError, invalidParameter } from "@gw/shared";
import type { z } from "zod";
import type { AppContext } from "../app-context";
import { record, type ConsoleActor } from "../console/service";
import type { CatalogModel, CatalogSnapshot } from "./catalog";

// The admin console's catalog edits (CONTRACT 12): each is checked by CONFIG_FILE's rules, written as a new catalog
// version (409 conflict for a stale one) and recorded in the audit log with before and after.

/** A model's editable fields (its id, type, provider and protocol are fixed: they decide which adapter serves it). */
export interface ModelEdit {
  enabled?: boolean;
  upstreamModel?: string;
  pricing?: Record<string, number | undefined>;
  contextWindow?: number;
  maxOutputTokens?: number;
  ownedBy?: string;
  deployments?: Array<{ id: string; baseUrl: string; apiKey?: string; weight?: number; upstreamModel?: string; requestsPerMinute?: number }>;
  fallbacks?: string[];
}

/** The first issue of a failed check as 400 invalid_parameter naming its field (`pricing.inputPer1k`, `plans[1].id`). */
function refusal(error: z.ZodError, prefix: string, skip = 0): AppError {
  const issue = error.issues[0];
  const path = (issue?.path ?? []).slice(skip).reduce<string>((name, part) => (typeof part === "number" ? `${name}[${part}]` : name ? `${name}.${String(part)}` : String(part)), prefix);
  return invalidParameter(path || prefix, issue?.message ?? "invalid");
}

const hide = (key: string | undefined) => (key ? `…${key.slice(-4)}` : key);

/** Keys are secrets: the console and the audit log show only their last four characters. */
export function shown(model: CatalogModel): CatalogModel {
  return {
    ...model,
    ...(model.apiKey !== undefined && { apiKey: hide(model.apiKey) }),
    ...(model.deployments && { deployments: model.deployments.map((d) => ({ ...d, apiKey: hide(d.apiKey) ?? "" })) }),
  };
}

/**
 * A deployment sent back without its key, or with the key as shown (`…abcd`), keeps the key its id has: an admin
 * edits a weight without ever seeing or retyping the secret.
 */
function keepKeys(current: CatalogModel, deployments: ModelEdit["deployments"]): ModelEdit["deployments"] {
  return deployments?.map((d) => {
    const stored = current.deployments?.find((s) => s.id === d.id)?.apiKey;
    return stored !== undefined && (d.apiKey === undefined || d.apiKey === hide(stored)) ? { ...d, apiKey: stored } : d;
  });
}

function modelOf(snapshot: CatalogSnapshot, id: string): CatalogModel {
  const model = snapshot.models.find((m) => m.id === id);
  if (!model) throw new AppError("not_found", `There is no model '${id.slice(0, 100)}' in the catalog.`);
  return model;
}

export const catalogEdits = {
  model: (ctx: AppContext, id: string) => {
    const snapshot = ctx.catalog.snapshot();
    return { version: snapshot.version, model: shown(modelOf(snapshot, id)) };
  },

  async patchModel(ctx: AppContext, actor: ConsoleActor, id: string, edit: ModelEdit, expected?: number) {
    const { enabled, ...fields } = edit;
    const { before, after } = await ctx.catalog.commit(expected, (base) => {
      const current = modelOf(base, id);
      const patch = { ...fields, ...(fields.deployments && { deployments: keepKeys(current, fields.deployments) }), id };
      const parsed = catalogSchemas.modelPatches(base.models.map(({ enabled: _e, ...m }) => m)).safeParse([patch]);
      // the edit is entry 0 of a CONFIG_FILE-style patch list: its errors name the field alone
      if (!parsed.success) throw refusal(parsed.error, "", 1);
      const enabledOf = new Map(base.models.map((m) => [m.id, m.enabled]));
      enabledOf.set(current.id, enabled ?? current.enabled);
      return { ...base, models: parsed.data.map((m) => ({ ...m, enabled: enabledOf.get(m.id) ?? true })) };
    });
    const model = modelOf(after, id);
    await record(ctx, actor, { action: "model.update", target: { type: "model", id }, before: { ...shown(modelOf(before, id)) }, after: { ...shown(model) } });
    return { version: after.version, model: shown(model) };
  },

  async setPlans(ctx: AppContext, actor: ConsoleActor, plans: unknown, expected?: number) {
    const parsed = catalogSchemas.plans.safeParse(plans);
    if (!parsed.success) throw refusal(parsed.error, "plans");
    const list: PlanDefinition[] = parsed.data;
    const { before, after } = await ctx.catalog.commit(expected, (base) => ({ ...base, plans: list }));
    await record(ctx, actor, { action: "plans.update", target: { type: "plans", id: "plans" }, before: { plans: before.plans }, after: { plans: after.plans } });
    return { version: after.version, plans: after.plans };
  },

  async setCreditPackages(ctx: AppContext, actor: ConsoleActor, packages: unknown, expected?: number) {
    const parsed = catalogSchemas.creditPackages.safeParse(packages);
    if (!parsed.success) throw refusal(parsed.error, "credit_packages");
    const list: CreditPackage[] = parsed.data;
    const { before, after } = await ctx.catalog.commit(expected, (base) => ({ ...base, creditPackages: list }));
    await record(ctx, actor, {
      action: "credit_packages.update", target: { type: "credit_packages", id: "credit_packages" },
      before: { credit_packages: before.creditPackages }, after: { credit_packages: after.creditPackages },
    });
    return { version: after.version, credit_packages: after.creditPackages };
  },
};
