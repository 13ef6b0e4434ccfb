import { useState, type FormEvent } from "react";
import { Card, EmptyState, ErrorAlert, Notice, PageTitle, Spinner } from "../../components/ui";
import { formatNumber } from "../../lib/format";
import { useSubmitGuard } from "../../lib/submit-guard";
import { AdminNav } from "./admin-nav";
import { parseJsonList, useCatalogModels, useUpdateModel, type CatalogModel, type ModelEdit } from "./api";

type PriceName = keyof CatalogModel["pricing"];

const PRICE_LABEL: Record<PriceName, string> = {
  inputPer1k: "Input per 1K tokens", outputPer1k: "Output per 1K tokens", imageStandard: "Standard image",
  imageHighRes: "High-res image", per1kChars: "Per 1K characters", perMinute: "Per audio minute",
};
const PRICES = Object.keys(PRICE_LABEL) as PriceName[];

const priceText = (m: CatalogModel) => PRICES.filter((p) => m.pricing[p] !== undefined).map((p) => `${p} ${formatNumber(m.pricing[p] ?? 0)}`).join(", ");

/**
 * The edit of one model. Prices are whole micro-dollars; deployments are a JSON list as in CONFIG_FILE. The browser
 * checks the form's shape; the server checks every rule again and its refusal (naming the field) is shown.
 */
function ModelForm({ model, version, onDone }: { model: CatalogModel; version: number; onDone: () => void }) {
  const update = useUpdateModel();
  const guard = useSubmitGuard();
  const [enabled, setEnabled] = useState(model.enabled);
  const [upstreamModel, setUpstreamModel] = useState(model.upstreamModel ?? "");
  const [prices, setPrices] = useState<Record<PriceName, string>>(() => Object.fromEntries(PRICES.map((p) => [p, model.pricing[p]?.toString() ?? ""])) as Record<PriceName, string>);
  const [deployments, setDeployments] = useState(model.deployments ? JSON.stringify(model.deployments, null, 2) : "");
  const [fallbacks, setFallbacks] = useState((model.fallbacks ?? []).join(", "));
  const [problem, setProblem] = useState<string | null>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    const pricing: Record<string, number> = {};
    for (const p of PRICES) {
      const raw = prices[p].trim();
      if (raw === "") continue;
      if (!/^\d+$/.test(raw)) return setProblem(`${PRICE_LABEL[p]}: enter whole micro-dollars (1 USD = 1000000), e.g. 1500.`);
      pricing[p] = Number(raw);
    }
    const edit: ModelEdit = { enabled, pricing, fallbacks: fallbacks.split(",").map((f) => f.trim()).filter(Boolean) };
    if (upstreamModel.trim()) edit.upstreamModel = upstreamModel.trim();
    if (deployments.trim()) {
      const parsed = parseJsonList(deployments);
      if ("error" in parsed) return setProblem(`Deployments: ${parsed.error}`);
      edit.deployments = parsed.list as ModelEdit["deployments"];
    }
    setProblem(null);
    if (!guard.begin()) return;
    update.mutate({ id: model.id, version, ...edit }, { onSuccess: onDone, onSettled: guard.end });
  }

  return (
    <form className="form" onSubmit={submit} noValidate aria-label={`Edit ${model.id}`}>
      <label className="field field-inline"><input type="checkbox" name="enabled" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /><span>Enabled (a disabled model is refused and absent from /v1/models)</span></label>
      <label className="field"><span>Upstream model</span><input name="upstream-model" value={upstreamModel} onChange={(e) => setUpstreamModel(e.target.value)} placeholder={model.id} /></label>
      <fieldset className="form-inline">
        <legend>Prices (micro-dollars; 1 USD = 1000000)</legend>
        {PRICES.map((p) => (
          <label key={p} className="field"><span>{PRICE_LABEL[p]}</span>
            <input name={`price-${p}`} inputMode="numeric" value={prices[p]} onChange={(e) => setPrices({ ...prices, [p]: e.target.value })} />
          </label>
        ))}
      </fieldset>
      <label className="field"><span>Fallbacks <span className="muted">(model ids, comma-separated)</span></span><input name="fallbacks" value={fallbacks} onChange={(e) => setFallbacks(e.target.value)} /></label>
      <label className="field"><span>Deployments <span className="muted">(JSON list of {"{id, baseUrl, apiKey, weight, upstreamModel?, requestsPerMinute?}"}; empty: keep as is)</span></span>
        <textarea name="deployments" rows={6} value={deployments} onChange={(e) => setDeployments(e.target.value)} spellCheck={false} />
      </label>
      {problem ? <p className="field-error" role="alert">{problem}</p> : null}
      <ErrorAlert error={update.error} messages={{ conflict: "Another admin changed the catalog meanwhile: it has been read again; review and save once more." }} />
      <div className="form-inline">
        <button type="submit" className="btn btn-primary" disabled={update.isPending}>{update.isPending ? "Saving…" : "Save"}</button>
        <button type="button" className="btn" onClick={onDone}>Cancel</button>
      </div>
    </form>
  );
}

export function AdminModelsPage() {
  const models = useCatalogModels();
  // each deployment with its weight and its state now (CONTRACT 13), as /api/status/external shows it
  const deploymentsText = (m: CatalogModel, states: ReadonlyArray<{ model: string; deployment: string; status: string; cooling_until?: string }>) => {
    const own = states.filter((d) => d.model === m.id);
    if (own.length === 0) return m.deployments ? m.deployments.map((d) => `${d.id} (×${d.weight})`).join(", ") : "provider default";
    return own.map((d) => {
      const weight = m.deployments?.find((c) => c.id === d.deployment)?.weight;
      const until = d.cooling_until ? ` until ${new Date(d.cooling_until).toLocaleTimeString()}` : "";
      return `${d.deployment}${weight !== undefined ? ` (×${weight})` : ""}: ${d.status.replace("_", " ")}${until}`;
    }).join(", ");
  };
  const [editing, setEditing] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const rows = models.data?.models;
  const current = rows?.find((m) => m.id === editing);
  return (
    <>
      <PageTitle subtitle="The model catalog in force on every instance within seconds; a request under way keeps its prices.">Admin</PageTitle>
      <AdminNav />
      {saved ? <Notice tone="success">Saved {saved}.</Notice> : null}
      {current && models.data ? (
        <Card title={`Edit ${current.id}`}>
          <ModelForm key={`${current.id}:${models.data.version}`} model={current} version={models.data.version} onDone={() => { setSaved(current.id); setEditing(null); }} />
        </Card>
      ) : null}
      <Card title={`Models${models.data ? ` (catalog version ${models.data.version})` : ""}`}>
        {models.isPending ? <Spinner /> : null}
        <ErrorAlert error={models.error} />
        {rows && rows.length === 0 ? <EmptyState title="No models" /> : null}
        {rows && rows.length > 0 ? (
          <div className="table-wrap">
            <table className="table" data-testid="admin-models">
              <thead><tr><th scope="col">Model</th><th scope="col">Type</th><th scope="col">Enabled</th><th scope="col">Prices (µ$)</th><th scope="col">Upstream model</th><th scope="col">Deployments</th><th scope="col">Fallbacks</th><th scope="col"><span className="sr-only">Edit</span></th></tr></thead>
              <tbody>
                {rows.map((m) => (
                  <tr key={m.id}>
                    <td data-label="Model"><code>{m.id}</code></td>
                    <td data-label="Type">{m.type}</td>
                    <td data-label="Enabled">{m.enabled ? "Yes" : "No"}</td>
                    <td data-label="Prices (µ$)">{priceText(m)}</td>
                    <td data-label="Upstream model">{m.upstreamModel ?? "—"}</td>
                    <td data-label="Deployments">{deploymentsText(m, models.data?.deployments ?? [])}</td>
                    <td data-label="Fallbacks">{m.fallbacks?.join(", ") || "—"}</td>
                    <td><button type="button" className="btn btn-small" onClick={() => { setSaved(null); setEditing(m.id); }}>Edit</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </Card>
    </>
  );
}
