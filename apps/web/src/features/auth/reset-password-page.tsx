import { useState, type FormEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router-dom";
import { ErrorAlert } from "../../components/ui";
import { useConfirmPasswordReset } from "./api";
import { AuthLayout } from "./auth-layout";
import { passwordAcceptable } from "./password-rules";
import { PasswordRulesList } from "./password-rules-list";

export function ResetPasswordPage() {
  const [params] = useSearchParams();
  const token = params.get("token") ?? "";
  const navigate = useNavigate();
  const confirm = useConfirmPasswordReset();
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [localError, setLocalError] = useState<Error | null>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!passwordAcceptable(password)) return setLocalError(new Error("The password doesn't meet every rule yet."));
    if (password !== repeat) return setLocalError(new Error("The two passwords differ."));
    setLocalError(null);
    confirm.mutate({ token, password }, { onSuccess: () => navigate("/login?reset=1", { replace: true }) });
  }

  return (
    <AuthLayout title="Choose a new password" footer={<Link to="/forgot-password">Request a new link</Link>}>
      {!token ? (
        <ErrorAlert error={new Error("This link has no token. Open the link from the e-mail again.")} />
      ) : (
        <form onSubmit={submit} className="form" noValidate>
          <label className="field">
            <span>New password</span>
            <input
              type="password" name="password" autoComplete="new-password" aria-describedby="reset-password-rules"
              value={password} onChange={(e) => setPassword(e.target.value)}
            />
          </label>
          <PasswordRulesList password={password} id="reset-password-rules" />
          <label className="field">
            <span>Repeat the new password</span>
            <input type="password" name="repeat" autoComplete="new-password" value={repeat} onChange={(e) => setRepeat(e.target.value)} />
          </label>
          <ErrorAlert error={localError ?? confirm.error} />
          <button type="submit" className="btn btn-primary btn-block" disabled={confirm.isPending}>
            {confirm.isPending ? "Saving…" : "Set new password"}
          </button>
        </form>
      )}
    </AuthLayout>
  );
}
