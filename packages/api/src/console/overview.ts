import { LEDGER_COLLECTION } from "@gw/billing";
import { microsToDollars } from "@gw/shared";
import type { AppContext } from "../app-context";

// GET /api/admin/overview (CONTRACT 12): the business at a glance over [from, to), read from what exists: ledger
// entries (money in and out of balances), settle entries' `meta` (each request's usage record) and purchases' paid
// amounts. Cost: one pass over the ledger entries written in the range (FerretDB answers the date filter by a scan
// of the collection; the entries are summed here, as $group $sum reads 0 on FerretDB 1.24), projected to the few
// fields read; then one user lookup per top account. Requests that failed cost nothing and leave no entry: they are
// counted by GET /metrics, not here.

/** The fields of a ledger entry read here. */
interface EntryDoc {
  userId: string;
  kind: string;
  amount: number;
  cost?: number;
  createdAt: Date;
  meta?: { amountCents?: number; grant?: string; refundedCents?: number; fromCents?: number; model?: string; processingMs?: number; status?: string };
}

/** the kinds that grant credits when positive (a negative adjustment takes back) */
const GRANTS = new Set(["purchase", "bonus", "plan_credits", "adjustment", "redemption", "dispute"]);
const TAKE_BACKS = new Set(["refund", "dispute", "adjustment"]);

export interface Overview {
  from: string;
  to: string;
  revenue: { payments: number; refunds: number; net: number; by_day: Array<{ day: string; payments: number; refunds: number; net: number }> };
  credits: { granted: number; taken_back: number; consumed: number };
  models: Array<{ model: string; requests: number; errors: number; avg_latency_ms: number; spend: number }>;
  top_accounts: Array<{ user_id: string; email: string | null; spend: number; requests: number }>;
}

const utcDay = (at: Date): string => at.toISOString().slice(0, 10);
const cents = (n: number) => Math.round(n) / 100;

export async function overview(ctx: AppContext, range: { from: Date; to: Date; top: number }): Promise<Overview> {
  const docs = await ctx.db.connection.collection<EntryDoc>(LEDGER_COLLECTION).find(
    { createdAt: { $gte: range.from, $lt: range.to }, kind: { $in: [...GRANTS, ...TAKE_BACKS, "settle"] } },
    { projection: { _id: 0, userId: 1, kind: 1, amount: 1, cost: 1, createdAt: 1, meta: 1 } },
  ).toArray();

  const days = new Map<string, { payments: number; refunds: number }>();
  const dayOf = (at: Date) => {
    const key = utcDay(at);
    let day = days.get(key);
    if (!day) days.set(key, (day = { payments: 0, refunds: 0 }));
    return day;
  };
  let granted = 0, takenBack = 0, consumed = 0;
  const models = new Map<string, { requests: number; errors: number; latency: number; spend: number }>();
  const accounts = new Map<string, { spend: number; requests: number }>();

  for (const doc of docs) {
    if (doc.kind === "settle") {
      if (!doc.meta?.model) continue; // a settle of a hold opened outside the gateway
      const cost = doc.cost ?? 0;
      consumed += cost;
      const model = models.get(doc.meta.model) ?? { requests: 0, errors: 0, latency: 0, spend: 0 };
      model.requests += 1;
      model.errors += doc.meta.status === "partial" ? 1 : 0;
      model.latency += doc.meta.processingMs ?? 0;
      model.spend += cost;
      models.set(doc.meta.model, model);
      const account = accounts.get(doc.userId) ?? { spend: 0, requests: 0 };
      account.spend += cost;
      account.requests += 1;
      accounts.set(doc.userId, account);
      continue;
    }
    if (doc.amount > 0 && GRANTS.has(doc.kind)) granted += doc.amount;
    if (doc.amount < 0 && TAKE_BACKS.has(doc.kind)) takenBack -= doc.amount;
    // money: what a credit purchase was paid, less what refunds of purchases gave back
    if (doc.kind === "purchase" && doc.meta?.amountCents !== undefined) dayOf(doc.createdAt).payments += doc.meta.amountCents;
    if (doc.kind === "refund" && doc.meta?.grant?.startsWith("purchase:")) {
      dayOf(doc.createdAt).refunds += (doc.meta.refundedCents ?? 0) - (doc.meta.fromCents ?? 0);
    }
  }

  const byDay = [...days].sort(([x], [y]) => x.localeCompare(y))
    .map(([day, d]) => ({ day, payments: cents(d.payments), refunds: cents(d.refunds), net: cents(d.payments - d.refunds) }));
  const payments = [...days.values()].reduce((sum, d) => sum + d.payments, 0);
  const refunds = [...days.values()].reduce((sum, d) => sum + d.refunds, 0);
  const top = [...accounts].sort(([, x], [, y]) => y.spend - x.spend).slice(0, range.top);
  const users = await Promise.all(top.map(([id]) => ctx.auth.users.findById(id)));

  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    revenue: { payments: cents(payments), refunds: cents(refunds), net: cents(payments - refunds), by_day: byDay },
    credits: { granted: microsToDollars(granted), taken_back: microsToDollars(takenBack), consumed: microsToDollars(consumed) },
    models: [...models].sort(([x], [y]) => x.localeCompare(y)).map(([model, m]) => ({
      model, requests: m.requests, errors: m.errors, avg_latency_ms: Math.round(m.latency / m.requests), spend: microsToDollars(m.spend),
    })),
    top_accounts: top.map(([id, a], i) => ({ user_id: id, email: users[i]?.email ?? null, spend: microsToDollars(a.spend), requests: a.requests })),
  };
}
