import { useQuery } from "@tanstack/react-query";
import { Card, ErrorAlert, PageTitle, Spinner } from "../../components/ui";
import { ApiError } from "../../lib/api-error";
import { formatDate } from "../../lib/format";

interface HealthEntry {
  status: string;
  response_time: number;
  last_check: string;
  issue?: string;
}

interface ExternalStatus {
  status: string;
  services: Record<string, HealthEntry>;
  overall_status: string;
  timestamp: string;
}

const LABELS: Record<string, string> = {
  database: "Database",
  text_provider: "Text models",
  speech_provider: "Speech models",
  payment_provider: "Payments",
};

const MEANING: Record<string, string> = {
  healthy: "Fully operational",
  degraded: "Operational but slower than normal",
  unhealthy: "Having issues",
  unknown: "Cannot be determined",
};

async function fetchStatus(): Promise<ExternalStatus> {
  const res = await fetch("/api/status/external", { headers: { Accept: "application/json" } });
  const body = (await res.json().catch(() => undefined)) as (ExternalStatus & { message?: string; error_code?: string }) | undefined;
  // A degraded answer may come with a 503 yet still carry the per-service entries worth showing.
  if (body && typeof body.services === "object" && body.services !== null) return body;
  throw new ApiError(body?.error_code ?? "service_unavailable", body?.message ?? "", res.status);
}

export function StatusPage() {
  const status = useQuery({ queryKey: ["status", "external"], queryFn: fetchStatus, refetchInterval: 30_000, meta: { ignoreSessionLoss: true } });
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
                  {entry.issue ? <span className="service-issue">{entry.issue}</span> : null}
                </li>
              ))}
            </ul>
          </Card>
        </>
      ) : null}
    </>
  );
}
