import { useMemo, useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { Card, EmptyState, ErrorAlert, PageTitle, Spinner } from "../../components/ui";
import { formatDate, formatMoney, formatNumber } from "../../lib/format";
import { useKeys } from "../keys/api";
import { LOG_PAGE_SIZE, lastDays, usageCsvUrl, useFindRequest, useUsagePage, type UsageFilters, type UsageRecord, type UsageResponse } from "./api";
import { describeOutput } from "./describe-output";

const PRESETS = [7, 30, 90] as const;

/** Names keys by id; a revoked key is no longer listed, a call without key came from the dashboard. */
export function useKeyNames(): (keyId: string | null | undefined) => string {
  const keys = useKeys();
  return useMemo(() => {
    const names = new Map((keys.data?.keys ?? []).map((k) => [k.id, `${k.name} (${k.prefix}…)`]));
    return (keyId) => (keyId ? (names.get(keyId) ?? `Revoked key ${keyId}`) : "Dashboard");
  }, [keys.data]);
}

function FiltersCard({ filters, onChange, models }: { filters: UsageFilters; onChange: (f: UsageFilters) => void; models: string[] }) {
  const keys = useKeys();
  const [from, setFrom] = useState(filters.from);
  const [to, setTo] = useState(filters.to);
  const [problem, setProblem] = useState<string | null>(null);

  function apply(event: FormEvent) {
    event.preventDefault();
    if (!from || !to) return setProblem("Choose both days of the range.");
    if (from > to) return setProblem("The first day must not be after the last day.");
    setProblem(null);
    onChange({ ...filters, from, to });
  }

  function preset(days: number) {
    const range = lastDays(Date.now(), days);
    setFrom(range.from);
    setTo(range.to);
    setProblem(null);
    onChange({ ...filters, ...range });
  }

  return (
    <Card title="Range and filters" actions={<a className="btn btn-small" href={usageCsvUrl(filters)} download data-testid="csv-export">Export CSV</a>}>
      <div className="segmented presets" role="group" aria-label="Quick ranges">
        {PRESETS.map((days) => (
          <button key={days} type="button" onClick={() => preset(days)}>Last {days} days</button>
        ))}
      </div>
      <form className="form form-inline" onSubmit={apply} noValidate>
        <label className="field">
          <span>From (UTC day)</span>
          <input type="date" name="from" value={from} onChange={(e) => setFrom(e.target.value)} />
        </label>
        <label className="field">
          <span>To (UTC day, included)</span>
          <input type="date" name="to" value={to} onChange={(e) => setTo(e.target.value)} />
        </label>
        <button type="submit" className="btn">Show range</button>
        <div className="field">
          <label htmlFor="usage-model">Model</label>
          <select id="usage-model" name="model" value={filters.model ?? ""} onChange={(e) => onChange({ ...filters, model: e.target.value || undefined })}>
            <option value="">All models</option>
            {models.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="usage-key">Key</label>
          <select id="usage-key" name="key" value={filters.key_id ?? ""} onChange={(e) => onChange({ ...filters, key_id: e.target.value || undefined })}>
            <option value="">All keys</option>
            {(keys.data?.keys ?? []).map((k) => <option key={k.id} value={k.id}>{k.name} ({k.prefix}…)</option>)}
          </select>
        </div>
      </form>
      {problem ? <p className="field-error" role="alert">{problem}</p> : null}
    </Card>
  );
}

export function Breakdown({ usage, keyName }: { usage: UsageResponse; keyName: (id: string | null | undefined) => string }) {
  const byModel = [...usage.totals.by_model].sort((a, b) => b.cost - a.cost || b.requests - a.requests);
  const byKey = usage.totals.by_key ? [...usage.totals.by_key].sort((a, b) => b.cost - a.cost || b.requests - a.requests) : null;
  return (
    <div className="grid-2">
      <Card title="By model">
        {byModel.length === 0 ? <EmptyState title="No requests in this range" /> : (
          <div className="table-wrap">
            <table className="table" aria-label="Usage by model">
              <thead><tr><th scope="col">Model</th><th scope="col" className="num">Requests</th><th scope="col" className="num">Cost</th></tr></thead>
              <tbody>
                {byModel.map((m) => (
                  <tr key={m.model}>
                    <td data-label="Model"><code>{m.model}</code></td>
                    <td data-label="Requests" className="num">{formatNumber(m.requests)}</td>
                    <td data-label="Cost" className="num">{formatMoney(m.cost)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <Card title="By key">
        {byKey === null ? <p className="muted">This gateway does not break usage down by key yet.</p> : byKey.length === 0 ? <EmptyState title="No requests in this range" /> : (
          <div className="table-wrap">
            <table className="table" aria-label="Usage by key">
              <thead><tr><th scope="col">Key</th><th scope="col" className="num">Requests</th><th scope="col" className="num">Cost</th></tr></thead>
              <tbody>
                {byKey.map((k) => (
                  <tr key={k.key_id ?? "session"}>
                    <td data-label="Key" className="wrap-anywhere">{keyName(k.key_id)}</td>
                    <td data-label="Requests" className="num">{formatNumber(k.requests)}</td>
                    <td data-label="Cost" className="num">{formatMoney(k.cost)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </div>
  );
}

function RequestRows({ records, keyName }: { records: UsageRecord[]; keyName: (id: string | null | undefined) => string }) {
  return (
    <div className="table-wrap">
      <table className="table" aria-label="Request log">
        <thead>
          <tr>
            <th scope="col">Time</th><th scope="col">Request id</th><th scope="col">Model</th><th scope="col">Key</th>
            <th scope="col">Usage</th><th scope="col" className="num">Cost</th><th scope="col" className="num">Latency</th>
          </tr>
        </thead>
        <tbody>
          {records.map((r) => (
            <tr key={r.id} data-request-id={r.request_id}>
              <td data-label="Time">{formatDate(r.created_at)}</td>
              <td data-label="Request id" className="wrap-anywhere"><code>{r.request_id}</code></td>
              <td data-label="Model"><code>{r.model}</code><span className="muted"> {r.endpoint}</span></td>
              <td data-label="Key" className="wrap-anywhere">{keyName(r.key_id)}</td>
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

function SearchResult({ filters, requestId, keyName }: { filters: UsageFilters; requestId: string; keyName: (id: string | null | undefined) => string }) {
  const found = useFindRequest(filters, requestId);
  if (found.isPending) return <Spinner label="Searching…" />;
  if (found.error) return <ErrorAlert error={found.error} title="Search failed" />;
  if (!found.data) return <EmptyState title={`No request with id ${requestId} in this range.`}>Widen the range or check the id (the X-Request-Id header of the answer).</EmptyState>;
  return <RequestRows records={[found.data]} keyName={keyName} />;
}

export function RequestLog({ filters, usage, page, setPage, keyName }: {
  filters: UsageFilters; usage: UsageResponse; page: number; setPage: (page: number) => void; keyName: (id: string | null | undefined) => string;
}) {
  const [query, setQuery] = useState("");
  const [searching, setSearching] = useState<string | null>(null);
  const pages = usage.pagination.total_pages;
  return (
    <Card title="Request log">
      <form className="form form-inline" role="search" onSubmit={(e) => { e.preventDefault(); setSearching(query.trim() || null); }}>
        <label className="field grow">
          <span>Request id</span>
          <input name="request-id" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="req_… (the X-Request-Id of an answer)" autoComplete="off" spellCheck={false} />
        </label>
        <button type="submit" className="btn" disabled={!query.trim()}>Search</button>
        {searching ? <button type="button" className="btn" onClick={() => { setSearching(null); setQuery(""); }}>Show all</button> : null}
      </form>
      {searching ? <SearchResult filters={filters} requestId={searching} keyName={keyName} /> : (
        <>
          {usage.data.length === 0 ? (
            <EmptyState title="No requests in this range">
              <Link to="/dashboard/keys">Create an API key</Link> and call the API, or try the <Link to="/dashboard/playground">Playground</Link>.
            </EmptyState>
          ) : <RequestRows records={usage.data} keyName={keyName} />}
          {pages > 1 ? (
            <nav className="pager" aria-label="Request log pages">
              <button type="button" className="btn btn-small" disabled={page <= 1} onClick={() => setPage(page - 1)}>Newer</button>
              <span>Page {formatNumber(page)} of {formatNumber(pages)} · {formatNumber(usage.pagination.total)} requests, {LOG_PAGE_SIZE} a page</span>
              <button type="button" className="btn btn-small" disabled={page >= pages} onClick={() => setPage(page + 1)}>Older</button>
            </nav>
          ) : null}
        </>
      )}
    </Card>
  );
}

export function UsagePage() {
  const [filters, setFilters] = useState<UsageFilters>(() => lastDays(Date.now(), 30));
  const [page, setPage] = useState(1);
  const usage = useUsagePage(filters, page);
  const keyName = useKeyNames();
  // The range's models; with a model chosen, "All models" brings the others back.
  const models = [...new Set([...(usage.data?.totals.by_model.map((m) => m.model) ?? []), ...(filters.model ? [filters.model] : [])])].sort();

  function changeFilters(next: UsageFilters) {
    setFilters(next);
    setPage(1);
  }

  return (
    <>
      <PageTitle subtitle="Every request in a range, by model and by key; days are UTC days, as the API counts them.">Usage</PageTitle>
      <FiltersCard filters={filters} onChange={changeFilters} models={models} />
      <ErrorAlert error={usage.error} title="Usage could not be loaded" />
      {usage.isPending ? <Spinner /> : null}
      {usage.data ? (
        <>
          <div className="card stat-row" aria-label="Totals">
            <div><span className="muted">Requests</span><p className="stat-value" data-testid="usage-requests">{formatNumber(usage.data.totals.requests)}</p></div>
            <div><span className="muted">Spend</span><p className="stat-value" data-testid="usage-spend">{formatMoney(usage.data.totals.cost)}</p></div>
            <div><span className="muted">Tokens</span><p className="stat-value">{formatNumber(usage.data.totals.total_tokens ?? 0)}</p></div>
          </div>
          <Breakdown usage={usage.data} keyName={keyName} />
          <RequestLog filters={filters} usage={usage.data} page={page} setPage={setPage} keyName={keyName} />
        </>
      ) : null}
    </>
  );
}
