import { useMemo, useState } from "react";
import { Link } from "react-router-dom";
import { Card, EmptyState, ErrorAlert, PageTitle, Spinner } from "../../components/ui";
import { formatMoney, formatDay, formatNumber } from "../../lib/format";
import { useBalance, useSubscription } from "../billing/api";
import { QuickStartCard } from "../quick-start/quick-start-card";
import { useDailyByModel, useUsage } from "./api";
import { shapeChartData, type ChartMetric } from "./chart-data";
import { RecentRequests } from "./recent-requests";
import { UsageChart } from "./usage-chart";

function BalanceCard() {
  const balance = useBalance();
  return (
    <Card title="Balance" className="stat">
      {balance.isPending ? <Spinner /> : null}
      <ErrorAlert error={balance.error} />
      {balance.data ? <p className="stat-value" data-testid="balance">{formatMoney(balance.data.balance)}</p> : null}
      <Link to="/dashboard/billing">Add credits</Link>
    </Card>
  );
}

function PlanCard() {
  const sub = useSubscription();
  const plan = sub.data?.plan;
  return (
    <Card title="Plan" className="stat">
      {sub.isPending ? <Spinner /> : null}
      <ErrorAlert error={sub.error} />
      {plan ? (
        <>
          <p className="stat-value">{plan.name}</p>
          <ul className="plain-list muted">
            {sub.data ? <li>{formatNumber(sub.data.limits.requests_per_minute)} requests / minute</li> : null}
            {sub.data ? <li>{formatNumber(sub.data.limits.concurrent_requests)} concurrent requests</li> : null}
            {sub.data?.subscription ? (
              <li>{sub.data.subscription.cancel_at_period_end ? "Cancelled, ends" : "Renews"} {formatDay(sub.data.subscription.current_period_end)}</li>
            ) : null}
          </ul>
        </>
      ) : null}
      <Link to="/dashboard/billing">Change plan</Link>
    </Card>
  );
}

export function OverviewPage() {
  const usage = useUsage();
  const daily = useDailyByModel(usage.data);
  const [metric, setMetric] = useState<ChartMetric>("cost");
  const chart = useMemo(() => shapeChartData(daily.rows, metric, Date.now()), [daily.rows, metric]);

  return (
    <>
      <PageTitle subtitle="Your balance, plan and the last 30 days of usage.">Overview</PageTitle>
      <div className="grid-2">
        <BalanceCard />
        <PlanCard />
      </div>
      <QuickStartCard />
      <Card
        title="Last 30 days"
        actions={
          // Toggle buttons (aria-pressed) rather than radios: radios promise arrow-key movement these buttons don't have.
          <div className="segmented" role="group" aria-label="Chart metric">
            {(["cost", "requests"] as const).map((m) => (
              <button key={m} type="button" aria-pressed={metric === m} className={metric === m ? "active" : ""} onClick={() => setMetric(m)}>
                {m === "cost" ? "Spend" : "Requests"}
              </button>
            ))}
          </div>
        }
      >
        {usage.isPending ? <Spinner /> : null}
        <ErrorAlert error={usage.error ?? daily.error} />
        {usage.data ? (
          <>
            <p className="muted">
              Total: <strong>{metric === "cost" ? formatMoney(chart.total) : formatNumber(chart.total)}</strong>
              {/* the usage API counts days in UTC: east or west of it, a request's day can differ from its local date */}
              {" "}· days in UTC
            </p>
            {usage.data.totals.requests === 0 ? <EmptyState title="No usage in the last 30 days" /> : null}
            {usage.data.totals.requests > 0 && daily.pending ? <Spinner label="Loading chart…" /> : null}
            {usage.data.totals.requests > 0 && !daily.pending ? <UsageChart data={chart} metric={metric} /> : null}
          </>
        ) : null}
      </Card>
      <Card title="Recent requests" actions={<Link to="/dashboard/usage">All usage</Link>}>
        {usage.isPending ? <Spinner /> : null}
        <ErrorAlert error={usage.error} title="Recent requests could not be loaded" />
        {usage.data ? <RecentRequests records={usage.data.data} /> : null}
      </Card>
    </>
  );
}
