import { useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { ErrorAlert, Notice } from "../../components/ui";
import { useRequestPasswordReset } from "./api";
import { AuthLayout } from "./auth-layout";

export function ForgotPasswordPage() {
  const request = useRequestPasswordReset();
  const [email, setEmail] = useState("");

  function submit(event: FormEvent) {
    event.preventDefault();
    request.mutate({ email: email.trim() });
  }

  return (
    <AuthLayout title="Reset your password" footer={<Link to="/login">Back to log in</Link>}>
      {request.isSuccess ? (
        <Notice tone="success">If an account exists for {email.trim()}, we sent it a link to choose a new password. The link is valid for one hour.</Notice>
      ) : (
        <form onSubmit={submit} className="form" noValidate>
          <p className="muted">Enter your e-mail and we'll send you a link to choose a new password.</p>
          <label className="field">
            <span>E-mail</span>
            <input type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <ErrorAlert error={request.error} />
          <button type="submit" className="btn btn-primary btn-block" disabled={request.isPending || !email.trim()}>
            {request.isPending ? "Sending…" : "Send reset link"}
          </button>
        </form>
      )}
    </AuthLayout>
  );
}
