// Plans and credit packages are configuration (config.plans, config.creditPackages); these helpers read them.
import type { Config, CreditPackage, PlanDefinition } from "@gw/config";
import { AppError, dollarsToMicros, invalidParameter } from "@gw/shared";

export const FREE_PLAN_ID = "free";

export function findPlan(config: Pick<Config, "plans">, planId: string): PlanDefinition | undefined {
  return config.plans.find((p) => p.id === planId);
}

/** The free plan: configured as `free`, else the implicit 20 rpm / 2 concurrent default of CONTRACT 6. */
export function freePlan(config: Pick<Config, "plans">): PlanDefinition {
  return findPlan(config, FREE_PLAN_ID) ?? {
    id: FREE_PLAN_ID, name: "Free", price: 0, currency: "usd", interval: "month", features: [],
    monthlyCreditsMicros: 0, requestsPerMinute: 20, concurrentRequests: 2,
  };
}

/** A plan a user can subscribe to: known (else 404 plan_not_found) and paid (free needs no subscription). */
export function subscribablePlan(config: Pick<Config, "plans">, planId: string): PlanDefinition {
  const plan = findPlan(config, planId);
  if (!plan) throw new AppError("plan_not_found", `Plan '${planId}' does not exist.`);
  if (plan.price <= 0) throw invalidParameter("plan_id", `plan '${planId}' is free and needs no subscription`);
  return plan;
}

/** Bonus (micro-dollars) earned by buying exactly a package amount; 0 for any other amount. */
export function bonusMicrosFor(config: Pick<Config, "creditPackages">, amountDollars: number): number {
  const pkg: CreditPackage | undefined = config.creditPackages.find((p) => p.amount === amountDollars);
  return pkg ? dollarsToMicros(pkg.bonus) : 0;
}

/** SPEC 2.9 plan, as listed by GET /api/billing/config. */
export interface PublicPlan {
  id: string;
  name: string;
  price: number;
  currency: string;
  interval: string;
  features: string[];
}

export function publicPlan(plan: PlanDefinition): PublicPlan {
  return { id: plan.id, name: plan.name, price: plan.price, currency: plan.currency.toLowerCase(), interval: plan.interval, features: [...plan.features] };
}
