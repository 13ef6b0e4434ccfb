import { useState, type FormEvent } from "react";
import { Card, ErrorAlert, Notice } from "../../components/ui";
import { formatCost } from "../../lib/format";
import { useSubmitGuard } from "../../lib/submit-guard";
import { useRedeemCode } from "./api";

/** Texts for the redemption's refusals (CONTRACT 12). */
const REDEEM_MESSAGES = {
  not_found: "There is no such code. Check its spelling.",
  conflict: "You have already redeemed this code.",
  code_expired: "This code has expired or has been used up.",
};

/** Any user redeems a code an operator handed out for credits (once per account and code). */
export function RedeemCard() {
  const redeem = useRedeemCode();
  const guard = useSubmitGuard();
  const [code, setCode] = useState("");

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!code.trim() || !guard.begin()) return;
    redeem.mutate({ code: code.trim() }, { onSuccess: () => setCode(""), onSettled: guard.end });
  }

  return (
    <Card title="Redeem a code">
      <form className="form form-inline" onSubmit={submit} noValidate>
        <label className="field grow">
          <span>Code</span>
          <input name="redeem-code" maxLength={64} value={code} onChange={(e) => setCode(e.target.value)} autoComplete="off" />
        </label>
        <button type="submit" className="btn" disabled={redeem.isPending || !code.trim()}>{redeem.isPending ? "Redeeming…" : "Redeem"}</button>
      </form>
      {redeem.isSuccess ? <Notice tone="success">{formatCost(redeem.data.amount)} added: your balance is {formatCost(redeem.data.balance)}.</Notice> : null}
      <ErrorAlert error={redeem.error} messages={REDEEM_MESSAGES} />
    </Card>
  );
}
