import { useState, type FormEvent, type KeyboardEvent } from "react";
import { Link, useParams } from "react-router-dom";
import { Card, EmptyState, ErrorAlert, Notice, PageTitle, Spinner } from "../../components/ui";
import { useConfirmStep } from "../../lib/confirm-step";
import { formatCost, formatDate, formatDay, formatNumber } from "../../lib/format";
import { useSubmitGuard } from "../../lib/submit-guard";
import { historyLabel } from "../billing/api";
import { AdminNav } from "./admin-nav";
import {
  useAdjustCredits, useAdminLedger, useAdminUser, useRevokeUserKeys, useSuspend, useUnsuspend, validateAdjustment, type AdminUserDetail,
} from "./api";

function CreditForm({ userId }: { userId: string }) {
  const adjust = useAdjustCredits();
  const guard = useSubmitGuard();
  const [amount, setAmount] = useState("");
  const [reason, setReason] = useState("");
  const [problem, setProblem] = useState<string | null>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    const invalid = validateAdjustment(amount) ?? (reason.trim() ? null : "Give a reason (it is kept in the ledger and the audit log).");
    setProblem(invalid);
    if (invalid || !guard.begin()) return;
    adjust.mutate({ id: userId, amount: Number(amount), reason: reason.trim() }, {
      onSuccess: () => { setAmount(""); setReason(""); },
      onSettled: guard.end,
    });
  }

  return (
    <form className="form form-inline" onSubmit={submit} noValidate aria-label="Adjust credits">
      <label className="field">
        <span>Amount (USD, negative takes back)</span>
        <input name="adjust-amount" inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} placeholder="5.00" aria-invalid={problem ? true : undefined} />
      </label>
      <label className="field grow">
        <span>Reason</span>
        <input name="adjust-reason" maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} placeholder="e.g. goodwill credit" />
      </label>
      <button type="submit" className="btn btn-primary" disabled={adjust.isPending}>{adjust.isPending ? "Saving…" : "Adjust credits"}</button>
      {problem ? <p className="field-error" role="alert">{problem}</p> : null}
      {adjust.isSuccess ? <Notice tone="success">Done: the balance is now {formatCost(adjust.data.balance)}.</Notice> : null}
      <ErrorAlert error={adjust.error} />
    </form>
  );
}

/** A button that asks once more before it acts. */
function ConfirmedAction({ label, question, pendingLabel, danger, onConfirm, pending, error }: {
  label: string; question: string; pendingLabel: string; danger?: boolean; onConfirm: () => void; pending: boolean; error: unknown;
}) {
  const { confirming, openerRef, open, dismiss } = useConfirmStep();
  return (
    <div>
      {confirming ? (
        <div className="confirm" role="group" aria-label={question} onKeyDown={(event: KeyboardEvent) => { if (event.key === "Escape" && !pending) dismiss(); }}>
          <span>{question}</span>
          <button type="button" className={danger ? "btn btn-small btn-danger" : "btn btn-small btn-primary"} disabled={pending} onClick={() => { onConfirm(); dismiss(); }} autoFocus>
            {pending ? pendingLabel : `Yes, ${label.toLowerCase()}`}
          </button>
          <button type="button" className="btn btn-small" onClick={dismiss}>Cancel</button>
        </div>
      ) : (
        <button ref={openerRef} type="button" className={danger ? "btn btn-danger-outline" : "btn"} onClick={open} disabled={pending}>{label}</button>
      )}
      <ErrorAlert error={error} />
    </div>
  );
}

function AccountActions({ detail }: { detail: AdminUserDetail }) {
  const suspend = useSuspend();
  const unsuspend = useUnsuspend();
  const revoke = useRevokeUserKeys();
  const id = detail.user.id;
  return (
    <div className="form form-inline">
      {detail.user.status === "active" ? (
        <ConfirmedAction label="Suspend" danger question={`Suspend ${detail.user.email}? Their keys stop working and they are logged out.`}
          pendingLabel="Suspending…" pending={suspend.isPending} error={suspend.error} onConfirm={() => suspend.mutate({ id })} />
      ) : (
        <ConfirmedAction label="Unsuspend" question={`Lift the suspension of ${detail.user.email}?`}
          pendingLabel="Unsuspending…" pending={unsuspend.isPending} error={unsuspend.error} onConfirm={() => unsuspend.mutate({ id })} />
      )}
      <ConfirmedAction label="Revoke all keys" danger question={`Revoke every API key of ${detail.user.email}? This cannot be undone.`}
        pendingLabel="Revoking…" pending={revoke.isPending} error={revoke.error} onConfirm={() => revoke.mutate({ id })} />
      {revoke.isSuccess ? <Notice tone="success">{revoke.data.revoked} key(s) revoked.</Notice> : null}
    </div>
  );
}

function LedgerCard({ userId }: { userId: string }) {
  const ledger = useAdminLedger(userId);
  const entries = ledger.data?.pages.flatMap((page) => page.entries);
  return (
    <Card title="Ledger">
      {ledger.isPending ? <Spinner /> : null}
      <ErrorAlert error={ledger.error} />
      {entries && entries.length === 0 ? <EmptyState title="No credits or payments yet" /> : null}
      {entries && entries.length > 0 ? (
        <div className="table-wrap">
          <table className="table" data-testid="admin-ledger">
            <thead><tr><th scope="col">Date</th><th scope="col">Description</th><th scope="col" className="num">Amount</th><th scope="col" className="num">Balance after</th></tr></thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td data-label="Date">{formatDate(e.created_at)}</td>
                  <td data-label="Description">{historyLabel(e.type)}</td>
                  <td data-label="Amount" className={e.amount >= 0 ? "num positive" : "num"}>{formatCost(e.amount)}</td>
                  <td data-label="Balance after" className="num">{formatCost(e.balance_after)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {ledger.hasNextPage ? (
        <button type="button" className="btn" disabled={ledger.isFetchingNextPage} onClick={() => void ledger.fetchNextPage()}>
          {ledger.isFetchingNextPage ? "Loading…" : "Show older entries"}
        </button>
      ) : null}
    </Card>
  );
}

export function AdminUserPage() {
  const { id = "" } = useParams();
  const user = useAdminUser(id);
  const detail = user.data;
  return (
    <>
      <PageTitle subtitle={<Link to="/dashboard/admin">Back to users</Link>}>{detail ? detail.user.email : "User"}</PageTitle>
      <AdminNav />
      {user.isPending ? <Spinner /> : null}
      <ErrorAlert error={user.error} />
      {detail ? (
        <>
          <Card title="Account">
            <dl className="details">
              <div><dt>Status</dt><dd><span className={`badge badge-${detail.user.status}`} data-testid="admin-user-status">{detail.user.status}</span></dd></div>
              <div><dt>Balance</dt><dd data-testid="admin-user-balance">{formatCost(detail.balance)}</dd></div>
              <div><dt>Plan</dt><dd>{detail.user.plan}{detail.subscription ? ` (${detail.subscription.status})` : ""}</dd></div>
              <div><dt>Spend, 30 days</dt><dd>{formatCost(detail.usage_30d.cost)} · {formatNumber(detail.usage_30d.requests)} requests</dd></div>
              <div><dt>Name</dt><dd>{detail.user.name || "—"}</dd></div>
              <div><dt>E-mail verified</dt><dd>{detail.user.email_verified ? "Yes" : "No"}{detail.user.admin ? " · admin" : ""}</dd></div>
              <div><dt>Joined</dt><dd>{formatDay(detail.user.created_at)}</dd></div>
            </dl>
            <AccountActions detail={detail} />
          </Card>
          <Card title="Adjust credits"><CreditForm userId={detail.user.id} /></Card>
          <Card title="API keys">
            {detail.keys.length === 0 ? <EmptyState title="No active keys" /> : (
              <div className="table-wrap">
                <table className="table">
                  <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col" className="num">Uses</th></tr></thead>
                  <tbody>
                    {detail.keys.map((k) => (
                      <tr key={k.id}>
                        <td data-label="Name" className="wrap-anywhere">{k.name}</td>
                        <td data-label="Prefix"><code>{k.prefix}…</code></td>
                        <td data-label="Created">{formatDate(k.created_at)}</td>
                        <td data-label="Last used">{formatDate(k.last_used)}</td>
                        <td data-label="Uses" className="num">{formatNumber(k.usage_count)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Card>
          <LedgerCard userId={detail.user.id} />
        </>
      ) : null}
    </>
  );
}
