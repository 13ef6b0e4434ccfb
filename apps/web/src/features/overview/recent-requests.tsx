import { Link } from "react-router-dom";
import { EmptyState } from "../../components/ui";
import { formatMoney, formatDate, formatNumber } from "../../lib/format";
import { describeOutput } from "../usage/describe-output";
import type { UsageRecord } from "../usage/api";

export function RecentRequests({ records }: { records: UsageRecord[] }) {
  if (records.length === 0) {
    return (
      <EmptyState title="No requests yet">
        <Link to="/dashboard/keys">Create an API key</Link> or try the <Link to="/dashboard/playground">Playground</Link>; your requests appear here.
      </EmptyState>
    );
  }
  return (
    <div className="table-wrap">
      <table className="table" aria-label="Recent requests">
        <thead>
          <tr><th scope="col">Time</th><th scope="col">Model</th><th scope="col">Usage</th><th scope="col" className="num">Cost</th><th scope="col" className="num">Latency</th></tr>
        </thead>
        <tbody>
          {records.map((r) => (
            <tr key={r.id}>
              <td data-label="Time">{formatDate(r.created_at)}</td>
              <td data-label="Model"><code>{r.model}</code></td>
              <td data-label="Usage">{describeOutput(r)}</td>
              <td data-label="Cost" className="num">{formatMoney(r.cost)}</td>
              <td data-label="Latency" className="num">{formatNumber(Math.round(r.processing_ms))} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
