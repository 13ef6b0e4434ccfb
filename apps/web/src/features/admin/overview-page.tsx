import { useState } from "react";
import { Card, EmptyState, ErrorAlert, PageTitle, Spinner } from "../../components/ui";
import { formatCost, formatMoney, formatNumber } from "../../lib/format";
import { AdminNav } from "./admin-nav";
import { useOverview } from "./api";

const DAY_MS = 86_400_000;
const dayInput = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The range [from 00:00 UTC, the day after `to` 00:00 UTC): whole days, as the revenue is counted. */
function rangeOf(from: string, to: string): { from: string; to: string } {
  return { from: `${from}T00:00:00Z`, to: new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS).toISOString() };
}

export function AdminOverviewPage() {
  const [from, setFrom] = useState(() => dayInput(Date.now() - 29 * DAY_MS));
  const [to, setTo] = useState(() => dayInput(Date.now()));
  const overview = useOverview(rangeOf(from, to));
  const o = overview.data;
  return (
    <>
      <PageTitle subtitle="Revenue, credits, requests by model and top accounts (UTC days, at most 92).">Admin</PageTitle>
      <AdminNav />
      <Card>
        <form className="form form-inline" onSubmit={(e) => e.preventDefault()} aria-label="Range">
          <label className="field"><span>From</span><input type="date" name="from" value={from} max={to} onChange={(e) => setFrom(e.target.value)} /></label>
          <label className="field"><span>To</span><input type="date" name="to" value={to} min={from} onChange={(e) => setTo(e.target.value)} /></label>
        </form>
        {overview.isPending ? <Spinner /> : null}
        <ErrorAlert error={overview.error} />
      </Card>
      {o ? (
        <>
          <Card title="Revenue">
            <p>Payments {formatMoney(o.revenue.payments)}, refunds {formatMoney(o.revenue.refunds)}, net <strong>{formatMoney(o.revenue.net)}</strong>.</p>
            {o.revenue.by_day.length === 0 ? <EmptyState title="No payments in this range" /> : (
              <div className="table-wrap">
                <table className="table" data-testid="admin-revenue">
                  <thead><tr><th scope="col">Day</th><th scope="col" className="num">Payments</th><th scope="col" className="num">Refunds</th><th scope="col" className="num">Net</th></tr></thead>
                  <tbody>{o.revenue.by_day.map((d) => (
                    <tr key={d.day}><td data-label="Day">{d.day}</td><td data-label="Payments" className="num">{formatMoney(d.payments)}</td><td data-label="Refunds" className="num">{formatMoney(d.refunds)}</td><td data-label="Net" className="num">{formatMoney(d.net)}</td></tr>
                  ))}</tbody>
                </table>
              </div>
            )}
          </Card>
          <Card title="Credits">
            <p>Granted {formatCost(o.credits.granted)}, taken back {formatCost(o.credits.taken_back)}, consumed by requests {formatCost(o.credits.consumed)}.</p>
          </Card>
          <Card title="Requests by model">
            {o.models.length === 0 ? <EmptyState title="No charged requests in this range" /> : (
              <div className="table-wrap">
                <table className="table" data-testid="admin-models-usage">
                  <thead><tr><th scope="col">Model</th><th scope="col" className="num">Requests</th><th scope="col" className="num">Cut streams</th><th scope="col" className="num">Avg latency</th><th scope="col" className="num">Spend</th></tr></thead>
                  <tbody>{o.models.map((m) => (
                    <tr key={m.model}><td data-label="Model"><code>{m.model}</code></td><td data-label="Requests" className="num">{formatNumber(m.requests)}</td><td data-label="Cut streams" className="num">{formatNumber(m.errors)}</td><td data-label="Avg latency" className="num">{formatNumber(m.avg_latency_ms)} ms</td><td data-label="Spend" className="num">{formatCost(m.spend)}</td></tr>
                  ))}</tbody>
                </table>
              </div>
            )}
          </Card>
          <Card title="Top accounts by spend">
            {o.top_accounts.length === 0 ? <EmptyState title="No spend in this range" /> : (
              <div className="table-wrap">
                <table className="table" data-testid="admin-top-accounts">
                  <thead><tr><th scope="col">Account</th><th scope="col" className="num">Requests</th><th scope="col" className="num">Spend</th></tr></thead>
                  <tbody>{o.top_accounts.map((a) => (
                    <tr key={a.user_id}><td data-label="Account" className="wrap-anywhere">{a.email ?? a.user_id}</td><td data-label="Requests" className="num">{formatNumber(a.requests)}</td><td data-label="Spend" className="num">{formatCost(a.spend)}</td></tr>
                  ))}</tbody>
                </table>
              </div>
            )}
          </Card>
        </>
      ) : null}
    </>
  );
}
