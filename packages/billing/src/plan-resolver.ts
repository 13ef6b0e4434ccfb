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

interface CachedPlan {
  plan: PlanDefinition;
  expiresAt: number;
  /** past this, the plan is still served while one background reload refreshes it */
  refreshAt: number;
}

/**
 * `planFor(userId)` on the gateway's hot path: the most expensive plan among the user's entitled subscriptions
 * (free without one), cached briefly in process. The webhook calls `invalidate` when a subscription changes.
 * A user who keeps calling never waits on the database: half-way through the TTL the plan is reloaded in the
 * background, and no answer older than the TTL is ever served.
 */
export function createPlanResolver(options: PlanResolverOptions): PlanLookup {
  const ttlMs = options.ttlMs ?? 10_000;
  const snapshots = subscriptionSnapshotStore(options.db.connection);
  const cache = new Map<string, CachedPlan>();
  const loading = new Map<string, Promise<PlanDefinition>>();

  async function resolve(userId: string): Promise<PlanDefinition> {
    let best: PlanDefinition | undefined;
    for (const state of currentStates(await snapshots.byUser(userId))) {
      const plan = isEntitled(state.status) ? findPlan(options.config, state.planId) : undefined;
      if (plan && (!best || plan.price > best.price)) best = plan;
    }
    return best ?? freePlan(options.config);
  }

  /** One query per user at a time; an `invalidate` meanwhile keeps its (possibly older) answer out of the cache. */
  function load(userId: string): Promise<PlanDefinition> {
    let pending = loading.get(userId);
    if (!pending) {
      const startedAt = options.clock.now();
      pending = resolve(userId).then((plan) => {
        if (loading.get(userId) === pending) {
          if (cache.size >= 50_000 && !cache.has(userId)) cache.clear(); // bounded: a cold cache costs one query per user
          cache.set(userId, { plan, expiresAt: startedAt + ttlMs, refreshAt: startedAt + ttlMs / 2 });
        }
        return plan;
      }).finally(() => {
        if (loading.get(userId) === pending) loading.delete(userId);
      });
      loading.set(userId, pending);
    }
    return pending;
  }

  return {
    async planFor(userId) {
      const now = options.clock.now();
      const hit = cache.get(userId);
      if (!hit || hit.expiresAt <= now) return load(userId);
      if (hit.refreshAt <= now && !loading.has(userId)) {
        // A failed reload is harmless: the entry expires and the next request queries again.
        load(userId).catch(() => undefined);
      }
      // the cached plan's definition as the catalog has it now (a plan edited at run time, CONTRACT 12)
      return findPlan(options.config, hit.plan.id) ?? hit.plan;
    },
    invalidate(userId) {
      cache.delete(userId);
      loading.delete(userId);
    },
  };
}
