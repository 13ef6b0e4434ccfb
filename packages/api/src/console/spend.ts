import type { AppContext } from "../app-context";

/** What a user's requests cost over a period: the usage records of its `settle` entries (one per request). Micro-dollars. */
export interface SpendSummary {
  requests: number;
  cost: number;
  /** by model name, sorted */
  by_model: Map<string, { requests: number; cost: number }>;
}

const SPEND_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The last 30 days' spend of one account, from the usage totals (UsageRepository): they walk the account's ledger
 * chain by `_id`, so the read costs that account's entries whatever the size of the ledger.
 */
export async function spend30d(ctx: Pick<AppContext, "usage" | "clock">, userId: string): Promise<SpendSummary> {
  const now = ctx.clock.now();
  const rows = await ctx.usage.totals({ userId, from: new Date(now - SPEND_DAYS * DAY_MS), to: new Date(now + 1) });
  const summary: SpendSummary = { requests: 0, cost: 0, by_model: new Map() };
  for (const row of [...rows].sort((a, b) => a.model.localeCompare(b.model))) {
    summary.requests += row.requests;
    summary.cost += row.costMicros;
    const model = summary.by_model.get(row.model) ?? { requests: 0, cost: 0 };
    model.requests += row.requests;
    model.cost += row.costMicros;
    summary.by_model.set(row.model, model);
  }
  return summary;
}
