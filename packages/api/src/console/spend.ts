import { LEDGER_COLLECTION } from "@gw/billing";
import type { Database } from "@gw/db";

/** What a user's requests cost over a period: the `settle` entries of the ledger (one per request). Micro-dollars. */
export interface SpendSummary {
  requests: number;
  cost: number;
  by_model: Map<string, { requests: number; cost: number }>;
}

interface SettleDoc {
  cost?: number;
  meta?: { model?: string };
}

/** Summed here, not with $group: FerretDB answers `$sum: "$field"` with 0 (see the usage repository). */
export async function spendSince(db: Database, userId: string, since: Date): Promise<SpendSummary> {
  const docs = await db.connection.collection<SettleDoc>(LEDGER_COLLECTION)
    .find({ userId, kind: "settle", createdAt: { $gte: since } }, { projection: { _id: 0, cost: 1, "meta.model": 1 } })
    .toArray();
  const summary: SpendSummary = { requests: 0, cost: 0, by_model: new Map() };
  for (const doc of docs) {
    const cost = doc.cost ?? 0;
    summary.requests += 1;
    summary.cost += cost;
    const model = doc.meta?.model ?? "unknown";
    const row = summary.by_model.get(model) ?? { requests: 0, cost: 0 };
    row.requests += 1;
    row.cost += cost;
    summary.by_model.set(model, row);
  }
  return summary;
}
