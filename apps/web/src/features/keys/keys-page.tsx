import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { Card, EmptyState, ErrorAlert, Notice, PageTitle, Spinner } from "../../components/ui";
import { formatDate, formatNumber } from "../../lib/format";
import { useConfirmStep } from "../../lib/confirm-step";
import { useSubmitGuard } from "../../lib/submit-guard";
import { useCreateKey, useKeys, useRevokeKey, type ApiKey, type CreatedKey } from "./api";
import { QuickStartCard } from "../quick-start/quick-start-card";
import { KeyReveal } from "./key-reveal";

function CreateKeyForm({ onCreated, focusOnMount }: { onCreated: (key: CreatedKey) => void; focusOnMount: boolean }) {
  const create = useCreateKey();
  const guard = useSubmitGuard();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const nameInput = useRef<HTMLInputElement>(null);
  // Back from the key reveal, keyboard users continue here rather than at the top of the page.
  useEffect(() => {
    if (focusOnMount) nameInput.current?.focus();
  }, [focusOnMount]);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!guard.begin()) return;
    const input = { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) };
    create.mutate(input, {
      onSuccess: (key) => {
        setName("");
        setDescription("");
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

function KeysTable({ keys, onRevoked }: { keys: ApiKey[]; onRevoked: (name: string) => void }) {
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Uses</th><th scope="col"><span className="sr-only">Actions</span></th></tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id} data-key-id={key.id}>
              <td data-label="Name" className="wrap-anywhere">{key.name}</td>
              <td data-label="Key"><code>{key.prefix}…</code></td>
              <td data-label="Created">{formatDate(key.created_at)}</td>
              <td data-label="Last used">{key.last_used ? formatDate(key.last_used) : "Never"}</td>
              <td data-label="Uses" className="num">{formatNumber(key.usage_count)}</td>
              <td className="actions"><RevokeButton apiKey={key} onRevoked={onRevoked} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function KeysPage() {
  const keys = useKeys();
  const [created, setCreated] = useState<CreatedKey | null>(null);
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
      {created ? <QuickStartCard secret={created.key} /> : null}
      <Card title="Active keys">
        {revoked ? <p className="alert alert-success wrap-anywhere" role="status" tabIndex={-1} ref={revokedNotice}>Key “{revoked.name}” was revoked.</p> : null}
        {keys.isPending ? <Spinner /> : null}
        <ErrorAlert error={keys.error} />
        {keys.data && keys.data.keys.length === 0 ? (
          <EmptyState title="No keys yet">Create one above to call the API from your code.</EmptyState>
        ) : null}
        {keys.data && keys.data.keys.length > 0 ? <KeysTable keys={keys.data.keys} onRevoked={(name) => setRevoked({ name })} /> : null}
        {keys.data && keys.data.total > keys.data.keys.length ? <Notice>Showing {keys.data.keys.length} of {keys.data.total} keys.</Notice> : null}
      </Card>
    </>
  );
}
