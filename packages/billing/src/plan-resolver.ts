import type { Config, PlanDefinition } from "@gw/config";
import type { Database } from "@gw/db";
import type { Clock } from "@gw/shared";
import { findPlan, freePlan } from "./catalog";
import type { PlanLookup } from "./runtime";
import { subscriptionSnapshotStore } from "./store/subscription-snapshots";
import { currentStates, isEntitled } from "./subscription-state";

export interface PlanResolverOptions {
  config: Pick<Config, "plans">;
  db: Database;
  clock: Clock;
  /** how long a resolved plan is reused; other instances see a subscription change within this time */
  ttlMs?: number;
}

/**
 * `planFor(userId)` on the gateway's hot path: the most expensive plan among the user's entitled subscriptions
 * (free without one), cached briefly in process. The webhook calls `invalidate` when a subscription changes.
 */
export function createPlanResolver(options: PlanResolverOptions): PlanLookup {
  const ttlMs = options.ttlMs ?? 10_000;
  const snapshots = subscriptionSnapshotStore(options.db.connection);
  const cache = new Map<string, { plan: PlanDefinition; expiresAt: number }>();

  async function resolve(userId: string): Promise<PlanDefinition> {
    let best: PlanDefinition | undefined;
    for (const state of currentStates(await snapshots.byUser(userId))) {
      const plan = isEntitled(state.status) ? findPlan(options.config, state.planId) : undefined;
      if (plan && (!best || plan.price > best.price)) best = plan;
    }
    return best ?? freePlan(options.config);
  }

  return {
    async planFor(userId) {
      const now = options.clock.now();
      const hit = cache.get(userId);
      if (hit && hit.expiresAt > now) return hit.plan;
      const plan = await resolve(userId);
      if (cache.size > 50_000) cache.clear(); // bounded: a cold cache only costs one query per user
      cache.set(userId, { plan, expiresAt: now + ttlMs });
      return plan;
    },
    invalidate(userId) {
      cache.delete(userId);
    },
  };
}
