import { Card, EmptyState, ErrorAlert, PageTitle, Spinner } from "../../components/ui";
import { formatDate } from "../../lib/format";
import { AdminNav } from "./admin-nav";
import { useAuditLog, type AuditEntry } from "./api";

const shown = (v: unknown): string => (typeof v === "object" && v !== null ? JSON.stringify(v) : String(v));
const change = (values: AuditEntry["before"]): string => (values ? Object.entries(values).map(([k, v]) => `${k}: ${shown(v)}`).join(", ") : "—");

export function AdminAuditPage() {
  const audit = useAuditLog();
  const entries = audit.data?.pages.flatMap((page) => page.entries);
  return (
    <>
      <PageTitle subtitle="Every admin action, newest first. Entries are never changed or removed.">Admin</PageTitle>
      <AdminNav />
      <Card title="Audit log">
        {audit.isPending ? <Spinner /> : null}
        <ErrorAlert error={audit.error} />
        {entries && entries.length === 0 ? <EmptyState title="No admin actions yet" /> : null}
        {entries && entries.length > 0 ? (
          <div className="table-wrap">
            <table className="table" data-testid="admin-audit">
              <thead><tr><th scope="col">Time</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Before</th><th scope="col">After</th><th scope="col">IP</th></tr></thead>
              <tbody>
                {entries.map((e) => (
                  <tr key={e.id}>
                    <td data-label="Time">{formatDate(e.created_at)}</td>
                    <td data-label="Actor" className="wrap-anywhere">{e.actor.email ?? e.actor.via}</td>
                    <td data-label="Action"><code>{e.action}</code></td>
                    <td data-label="Target" className="wrap-anywhere">{e.target.id}</td>
                    <td data-label="Before">{change(e.before)}</td>
                    <td data-label="After">{change(e.after)}</td>
                    <td data-label="IP">{e.ip ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        {audit.hasNextPage ? (
          <button type="button" className="btn" disabled={audit.isFetchingNextPage} onClick={() => void audit.fetchNextPage()}>
            {audit.isFetchingNextPage ? "Loading…" : "Show older entries"}
          </button>
        ) : null}
      </Card>
    </>
  );
}
