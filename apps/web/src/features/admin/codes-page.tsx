import { useState, type FormEvent } from "react";
import { Card, EmptyState, ErrorAlert, Notice, PageTitle, Spinner } from "../../components/ui";
import { formatCost, formatDate } from "../../lib/format";
import { useSubmitGuard } from "../../lib/submit-guard";
import { AdminNav } from "./admin-nav";
import { useCreateCode, useRedemptionCodes } from "./api";

function CreateCodeForm() {
  const create = useCreateCode();
  const guard = useSubmitGuard();
  const [amount, setAmount] = useState("");
  const [max, setMax] = useState("1");
  const [code, setCode] = useState("");
  const [expires, setExpires] = useState("");
  const [problem, setProblem] = useState<string | null>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    const invalid = !/^\d+(\.\d{1,2})?$/.test(amount.trim()) || Number(amount) <= 0 ? "Enter a positive amount in dollars with at most two decimals."
      : !/^[1-9]\d*$/.test(max.trim()) ? "Enter how many times the code may be redeemed (a whole number, at least 1)."
        : null;
    setProblem(invalid);
    if (invalid || !guard.begin()) return;
    create.mutate({
      amount: Number(amount),
      max_redemptions: Number(max),
      ...(code.trim() ? { code: code.trim() } : {}),
      ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
    }, { onSuccess: () => { setAmount(""); setCode(""); setExpires(""); }, onSettled: guard.end });
  }

  return (
    <form className="form form-inline" onSubmit={submit} noValidate aria-label="Create a redemption code">
      <label className="field"><span>Amount (USD)</span><input name="code-amount" inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} placeholder="5.00" /></label>
      <label className="field"><span>Max redemptions</span><input name="code-max" inputMode="numeric" value={max} onChange={(e) => setMax(e.target.value)} /></label>
      <label className="field"><span>Code <span className="muted">(optional)</span></span><input name="code-text" maxLength={64} value={code} onChange={(e) => setCode(e.target.value)} placeholder="random" /></label>
      <label className="field"><span>Expires <span className="muted">(optional)</span></span><input name="code-expires" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} /></label>
      <button type="submit" className="btn btn-primary" disabled={create.isPending}>{create.isPending ? "Creating…" : "Create code"}</button>
      {problem ? <p className="field-error" role="alert">{problem}</p> : null}
      {create.isSuccess ? <Notice tone="success">Created <code data-testid="created-code">{create.data.code}</code>.</Notice> : null}
      <ErrorAlert error={create.error} />
    </form>
  );
}

export function AdminCodesPage() {
  const codes = useRedemptionCodes();
  const rows = codes.data?.codes;
  return (
    <>
      <PageTitle subtitle="Codes users redeem on their billing page for credits, once per account.">Admin</PageTitle>
      <AdminNav />
      <Card title="New redemption code"><CreateCodeForm /></Card>
      <Card title="Redemption codes">
        {codes.isPending ? <Spinner /> : null}
        <ErrorAlert error={codes.error} />
        {rows && rows.length === 0 ? <EmptyState title="No codes yet" /> : null}
        {rows && rows.length > 0 ? (
          <div className="table-wrap">
            <table className="table">
              <thead><tr><th scope="col">Code</th><th scope="col" className="num">Amount</th><th scope="col" className="num">Redeemed</th><th scope="col">Expires</th><th scope="col">Created</th></tr></thead>
              <tbody>
                {rows.map((c) => (
                  <tr key={c.code}>
                    <td data-label="Code"><code>{c.code}</code></td>
                    <td data-label="Amount" className="num">{formatCost(c.amount)}</td>
                    <td data-label="Redeemed" className="num">{c.redeemed} / {c.max_redemptions}</td>
                    <td data-label="Expires">{c.expires_at ? formatDate(c.expires_at) : "Never"}</td>
                    <td data-label="Created">{formatDate(c.created_at)}</td>
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
