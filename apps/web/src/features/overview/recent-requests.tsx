import { EmptyState } from "../../components/ui";
import { formatCost, formatDate, formatNumber } from "../../lib/format";
import type { UsageRecord } from "./api";

/** What the request produced, in the unit the model bills by. */
export function describeOutput(record: UsageRecord): string {
  if (record.images) return `${formatNumber(record.images)} image${record.images === 1 ? "" : "s"}`;
  if (record.characters) return `${formatNumber(record.characters)} chars`;
  if (record.audio_seconds) return `${formatNumber(Math.round(record.audio_seconds))} s audio`;
  if (record.total_tokens) {
    return `${formatNumber(record.total_tokens)} tokens (${formatNumber(record.prompt_tokens)} in / ${formatNumber(record.completion_tokens)} out)`;
  }
  return "—";
}

export function RecentRequests({ records }: { records: UsageRecord[] }) {
  if (records.length === 0) {
    return <EmptyState title="No requests yet">Create an API key or try the Playground; your requests appear here.</EmptyState>;
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
              <td data-label="Cost" className="num">{formatCost(r.cost)}</td>
              <td data-label="Latency" className="num">{formatNumber(Math.round(r.processing_ms))} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
