import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { Card, EmptyState, ErrorAlert, Notice, PageTitle, Spinner } from "../../components/ui";
import { formatDate, formatDay, formatMoney, formatNumber } from "../../lib/format";
import { useConfirmStep } from "../../lib/confirm-step";
import { useSubmitGuard } from "../../lib/submit-guard";
import { useCreateKey, useKeys, useRevokeKey, type ApiKey, type CreatedKey, type RotatedKey } from "./api";
import { EMPTY_CONTROLS, RESET_LABELS, controlsFromForm, controlsSummary, type ControlsForm } from "./controls";
import { KeyControlsEditor } from "./key-controls-editor";
import { KeyControlsFields } from "./key-controls-fields";
import { RotateButton } from "./key-rotate";
import { QuickStartCard } from "../quick-start/quick-start-card";
import { KeyReveal } from "./key-reveal";

function CreateKeyForm({ onCreated, focusOnMount }: { onCreated: (key: CreatedKey) => void; focusOnMount: boolean }) {
  const create = useCreateKey();
  const guard = useSubmitGuard();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [controls, setControls] = useState<ControlsForm>(EMPTY_CONTROLS);
  const [problem, setProblem] = useState<string | null>(null);
  const nameInput = useRef<HTMLInputElement>(null);
  // Back from the key reveal, keyboard users continue here rather than at the top of the page.
  useEffect(() => {
    if (focusOnMount) nameInput.current?.focus();
  }, [focusOnMount]);

  function submit(event: FormEvent) {
    event.preventDefault();
    const checked = controlsFromForm(controls, Date.now());
    if ("error" in checked) return setProblem(checked.error);
    setProblem(null);
    if (!guard.begin()) return;
    const input = { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}), ...checked.input };
    create.mutate(input, {
      onSuccess: (key) => {
        setName("");
        setDescription("");
        setControls(EMPTY_CONTROLS);
        onCreated(key);
      },
      onSettled: guard.end,
    });
  }

  return (
    <form className="form form-inline" onSubmit={submit} noValidate>
      <label className="field">
        <span>Name</span>
        <input ref={nameInput} name="key-name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. production backend" />
      </label>
      <label className="field grow">
        <span>Description <span className="muted">(optional)</span></span>
        <input name="key-description" maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} placeholder="What is this key for?" />
      </label>
      <button type="submit" className="btn btn-primary" disabled={create.isPending || !name.trim()}>
        {create.isPending ? "Creating…" : "Create key"}
      </button>
      <details className="key-controls-toggle">
        <summary>Limits and restrictions (optional): spend limit, models, rate limit, expiry, IPs</summary>
        <KeyControlsFields value={controls} onChange={(next) => { setControls(next); setProblem(null); }} idPrefix="create" />
      </details>
      {problem ? <p className="field-error" role="alert">{problem}</p> : null}
      <ErrorAlert error={create.error} />
    </form>
  );
}

function RevokeButton({ apiKey, onRevoked }: { apiKey: ApiKey; onRevoked: (name: string) => void }) {
  const revoke = useRevokeKey();
  const guard = useSubmitGuard();
  const { confirming, openerRef, open, dismiss: cancel } = useConfirmStep();

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === "Escape" && !revoke.isPending) cancel();
  }

  if (!confirming) {
    return (
      <button ref={openerRef} type="button" className="btn btn-small btn-danger-outline" onClick={open} aria-label={`Revoke key ${apiKey.name}`}>
        Revoke
      </button>
    );
  }
  return (
    <div className="confirm" role="group" aria-label={`Confirm revoking ${apiKey.name}`} onKeyDown={onKeyDown}>
      <span className="wrap-anywhere">Revoke “{apiKey.name}”? Apps using it stop working at once.</span>
      <button type="button" className="btn btn-small btn-danger" disabled={revoke.isPending} onClick={() => guard.begin() && revoke.mutate({ id: apiKey.id }, { onSuccess: () => onRevoked(apiKey.name), onSettled: guard.end })} autoFocus>
        {revoke.isPending ? "Revoking…" : "Yes, revoke"}
      </button>
      <button type="button" className="btn btn-small" onClick={cancel}>Cancel</button>
      <ErrorAlert error={revoke.error} />
    </div>
  );
}

/** What the key spent against its limit: this period's spend of the limit, with a meter; else its spend in all. */
function SpendCell({ apiKey }: { apiKey: ApiKey }) {
  if (apiKey.limit === null) return <span>{formatMoney(apiKey.usage.spent_total)} <span className="muted">in all, no limit</span></span>;
  const spent = apiKey.limit_reset === "never" ? apiKey.usage.spent_total : apiKey.usage.spent_period;
  return (
    <span className="spend">
      <span>{formatMoney(spent)} of {formatMoney(apiKey.limit)} <span className="muted">{RESET_LABELS[apiKey.limit_reset]}</span></span>
      <meter min={0} max={apiKey.limit} value={Math.min(spent, apiKey.limit)} low={apiKey.limit * 0.75} high={apiKey.limit * 0.9} optimum={0}
        aria-label={`Spent ${formatMoney(spent)} of ${formatMoney(apiKey.limit)}`} />
      {apiKey.limit_remaining !== null ? <span className="muted">{formatMoney(apiKey.limit_remaining)} left</span> : null}
    </span>
  );
}

function KeysTable({ keys, onRevoked, onEdit, onRotated }: {
  keys: ApiKey[]; onRevoked: (name: string) => void; onEdit: (id: string) => void; onRotated: (key: RotatedKey, graceSeconds: number) => void;
}) {
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Restrictions</th><th scope="col">Spend</th><th scope="col">Last used</th><th scope="col">Uses</th><th scope="col"><span className="sr-only">Actions</span></th></tr>
        </thead>
        <tbody>
          {keys.map((key) => {
            const summary = controlsSummary(key, formatDay);
            return (
              <tr key={key.id} data-key-id={key.id}>
                <td data-label="Name" className="wrap-anywhere">{key.name}</td>
                <td data-label="Key"><code className="nowrap">{key.prefix}…</code><span className="key-meta muted">created {formatDay(key.created_at)}</span></td>
                <td data-label="Restrictions" className="key-restrictions" data-testid="key-controls-summary">{summary.length > 0 ? summary.join(" · ") : "None"}</td>
                <td data-label="Spend"><SpendCell apiKey={key} /></td>
                <td data-label="Last used">{key.last_used ? formatDate(key.last_used) : "Never"}</td>
                <td data-label="Uses" className="num">{formatNumber(key.usage_count)}</td>
                <td className="actions">
                  <div className="action-row">
                    <button type="button" className="btn btn-small" onClick={() => onEdit(key.id)} aria-label={`Edit controls of ${key.name}`}>Edit</button>
                    <RotateButton apiKey={key} onRotated={onRotated} />
                    <RevokeButton apiKey={key} onRevoked={onRevoked} />
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function KeysPage() {
  const keys = useKeys();
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [rotated, setRotated] = useState<{ key: RotatedKey; graceSeconds: number } | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const editedKey = keys.data?.keys.find((k) => k.id === editing);
  const [revealed, setRevealed] = useState(false);
  const [revoked, setRevoked] = useState<{ name: string } | null>(null);
  const revokedNotice = useRef<HTMLParagraphElement>(null);
  // The revoked key's row (and the button that had focus) is gone: keyboard and screen-reader users continue at the
  // confirmation, inside the list, rather than at the top of the page.
  useEffect(() => {
    if (revoked) revokedNotice.current?.focus();
  }, [revoked]);
  function dismissReveal() {
    setCreated(null);
    setRevealed(true);
  }
  return (
    <>
      <PageTitle subtitle="Keys authenticate programmatic calls: send them as Authorization: Bearer <key>.">API keys</PageTitle>
      <Card title="Create a key">
        {created ? <KeyReveal created={created} onDone={dismissReveal} /> : <CreateKeyForm onCreated={setCreated} focusOnMount={revealed} />}
      </Card>
      {rotated ? (
        <Card title="Rotated key">
          <KeyReveal
            created={rotated.key} onDone={() => setRotated(null)} heading={`New secret for “${rotated.key.name}”`}
            note={rotated.graceSeconds > 0
              ? `The old secret keeps working for ${rotated.graceSeconds / 3600} hour${rotated.graceSeconds === 3600 ? "" : "s"}; switch your apps to this one before then.`
              : "The old secret no longer works; switch your apps to this one."}
          />
        </Card>
      ) : null}
      {created || rotated ? <QuickStartCard secret={(rotated?.key ?? created)?.key} /> : null}
      {editedKey ? <KeyControlsEditor key={editedKey.id} apiKey={editedKey} onClose={() => setEditing(null)} /> : null}
      <Card title="Active keys">
        {revoked ? <p className="alert alert-success wrap-anywhere" role="status" tabIndex={-1} ref={revokedNotice}>Key “{revoked.name}” was revoked.</p> : null}
        {keys.isPending ? <Spinner /> : null}
        <ErrorAlert error={keys.error} />
        {keys.data && keys.data.keys.length === 0 ? (
          <EmptyState title="No keys yet">Create one above to call the API from your code.</EmptyState>
        ) : null}
        {keys.data && keys.data.keys.length > 0 ? <KeysTable keys={keys.data.keys} onRevoked={(name) => setRevoked({ name })} onEdit={setEditing} onRotated={(key, graceSeconds) => setRotated({ key, graceSeconds })} /> : null}
        {keys.data && keys.data.total > keys.data.keys.length ? <Notice>Showing {keys.data.keys.length} of {keys.data.total} keys.</Notice> : null}
      </Card>
    </>
  );
}
