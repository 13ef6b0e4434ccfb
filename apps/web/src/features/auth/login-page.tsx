import { useState, type FormEvent } from "react";
import { Link, useSearchParams } from "react-router-dom";
import { ErrorAlert, Notice } from "../../components/ui";
import { ApiError } from "../../lib/api-error";
import { useLogin } from "./api";
import { AuthLayout } from "./auth-layout";
import { OAuthButtons } from "./oauth-buttons";
import { OAUTH_MESSAGES } from "./oauth-messages";

export function LoginPage() {
  const [params] = useSearchParams();
  const login = useLogin();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const oauthError = params.get("error");
  const next = params.get("next");

  function submit(event: FormEvent) {
    event.preventDefault();
    // On success the me query refreshes and RedirectIfSignedIn sends the user on to `next`.
    login.mutate({ email: email.trim(), password });
  }

  return (
    <AuthLayout
      title="Log in"
      footer={
        <>
          <Link to="/forgot-password">Forgot your password?</Link>
          <span>
            New here? <Link to={next ? `/signup?next=${encodeURIComponent(next)}` : "/signup"}>Create an account</Link>
          </span>
        </>
      }
    >
      {params.get("reason") === "expired" ? <Notice tone="warning">Your session has expired. Please log in again.</Notice> : null}
      {params.get("reset") === "1" ? <Notice tone="success">Your password was changed. Log in with the new one.</Notice> : null}
      {params.get("deleted") === "1" ? <Notice tone="success">Your account was deleted.</Notice> : null}
      {oauthError ? <ErrorAlert error={new ApiError(oauthError, "Signing in with the provider failed.", 401)} title="Sign-in failed" messages={OAUTH_MESSAGES} /> : null}
      <OAuthButtons />
      <form onSubmit={submit} className="form" noValidate>
        <label className="field">
          <span>E-mail</span>
          <input type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label className="field">
          <span>Password</span>
          <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <ErrorAlert error={login.error} />
        <button type="submit" className="btn btn-primary btn-block" disabled={login.isPending}>
          {login.isPending ? "Logging in…" : "Log in"}
        </button>
      </form>
    </AuthLayout>
  );
}
