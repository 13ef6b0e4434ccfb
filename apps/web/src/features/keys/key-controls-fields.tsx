import { useModels } from "../playground/api";
import { LIMIT_RESETS, RESET_LABELS, type ControlsForm, type LimitReset } from "./controls";

/** The fields of a key's controls (CONTRACT 10); every one optional, empty meaning "no restriction". */
export function KeyControlsFields({ value, onChange, idPrefix }: { value: ControlsForm; onChange: (next: ControlsForm) => void; idPrefix: string }) {
  const models = useModels();
  const set = <K extends keyof ControlsForm>(field: K, v: ControlsForm[K]) => onChange({ ...value, [field]: v });
  const toggleModel = (id: string, on: boolean) =>
    set("allowedModels", on ? [...value.allowedModels, id] : value.allowedModels.filter((m) => m !== id));
  return (
    <div className="controls-fields">
      <fieldset className="fieldset">
        <legend>Spend limit</legend>
        <div className="form form-inline">
          <label className="field">
            <span>Limit (USD)</span>
            <input name="limit" inputMode="decimal" placeholder="No limit" value={value.limit} onChange={(e) => set("limit", e.target.value)} />
          </label>
          <div className="field">
            <label htmlFor={`${idPrefix}-limit-reset`}>Applies</label>
            <select id={`${idPrefix}-limit-reset`} name="limit-reset" value={value.limitReset} onChange={(e) => set("limitReset", e.target.value as LimitReset)}>
              {LIMIT_RESETS.map((r) => <option key={r} value={r}>{RESET_LABELS[r]}</option>)}
            </select>
          </div>
        </div>
        <p className="muted hint">Periods start at 00:00 UTC; weeks start on Monday. A request that could exceed what is left is refused (402).</p>
      </fieldset>
      <fieldset className="fieldset">
        <legend>Rate limit</legend>
        <div className="form form-inline">
          <label className="field">
            <span>Requests per minute</span>
            <input name="requests-per-minute" inputMode="numeric" placeholder="Plan's limit" value={value.requestsPerMinute} onChange={(e) => set("requestsPerMinute", e.target.value)} />
          </label>
          <label className="field">
            <span>Concurrent requests</span>
            <input name="concurrent-requests" inputMode="numeric" placeholder="Plan's limit" value={value.concurrentRequests} onChange={(e) => set("concurrentRequests", e.target.value)} />
          </label>
        </div>
        <p className="muted hint">At most your plan's limits; the stricter of the two applies.</p>
      </fieldset>
      <fieldset className="fieldset">
        <legend>Allowed models</legend>
        <p className="muted hint">None ticked: every model.</p>
        <div className="model-checks">
          {(models.data?.data ?? []).map((m) => (
            <label key={m.id} className="check">
              <input type="checkbox" name={`${idPrefix}-model`} value={m.id} checked={value.allowedModels.includes(m.id)} onChange={(e) => toggleModel(m.id, e.target.checked)} />
              <code>{m.id}</code>
            </label>
          ))}
        </div>
      </fieldset>
      <div className="form form-inline">
        <label className="field">
          <span>Expires <span className="muted">(your time zone; empty: never)</span></span>
          <input type="datetime-local" name="expires-at" value={value.expiresAt} onChange={(e) => set("expiresAt", e.target.value)} />
        </label>
        <label className="field grow">
          <span>Allowed IPs <span className="muted">(IPs or CIDRs, one a line; empty: any)</span></span>
          <textarea name="allowed-ips" rows={2} value={value.allowedIps} onChange={(e) => set("allowedIps", e.target.value)} placeholder={"203.0.113.7\n10.0.0.0/8"} spellCheck={false} />
        </label>
      </div>
    </div>
  );
}
