import { Card, ErrorAlert, PageTitle, Spinner } from "../../components/ui";
import { formatDate } from "../../lib/format";
import { trpc } from "../../trpc";

const LABELS: Record<string, string> = {
  database: "Database",
  text_provider: "Text models",
  speech_provider: "Speech models",
  payment_provider: "Payments",
};

/**
 * What a degraded or failing service means for a customer. The check's own `issue` is an operator's detail (an
 * upstream's raw error text, a host name): it stays in the API for operators and is not shown here.
 */
const CUSTOMER_NOTE: Record<string, string> = {
  degraded: "Responding more slowly than usual.",
  unhealthy: "Requests that need this service may fail. We are looking into it.",
};

const MEANING: Record<string, string> = {
  healthy: "Fully operational",
  degraded: "Operational but slower than normal",
  unhealthy: "Having issues",
  unknown: "Cannot be determined",
};

export function StatusPage() {
  const status = trpc.status.external.useQuery(undefined, { refetchInterval: 30_000, meta: { ignoreSessionLoss: true } });
  const overall = status.data?.overall_status ?? "unknown";
  return (
    <>
      <PageTitle subtitle="Health of the services the gateway depends on, refreshed every 30 seconds.">System status</PageTitle>
      {status.isPending ? <Spinner /> : null}
      <ErrorAlert error={status.error} title="Status unavailable" />
      {status.data ? (
        <>
          <div className={`overall overall-${overall}`} role="status">
            <span className={`dot dot-${overall}`} aria-hidden="true" />
            <strong>Overall: {overall}</strong> — {MEANING[overall] ?? overall}
            <span className="muted"> · checked {formatDate(status.data.timestamp)}</span>
          </div>
          <Card>
            <ul className="services">
              {Object.entries(status.data.services).map(([name, entry]) => (
                <li key={name} className="service" data-service={name}>
                  <span className={`dot dot-${entry.status}`} aria-hidden="true" />
                  <span className="service-name">{LABELS[name] ?? name}</span>
                  <span className={`badge badge-${entry.status}`}>{entry.status}</span>
                  <span className="muted">{entry.response_time} ms</span>
                  {CUSTOMER_NOTE[entry.status] ? <span className="service-issue">{CUSTOMER_NOTE[entry.status]}</span> : null}
                </li>
              ))}
            </ul>
          </Card>
        </>
      ) : null}
    </>
  );
}
