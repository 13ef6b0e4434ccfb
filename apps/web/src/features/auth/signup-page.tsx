import { useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { ErrorAlert, Notice } from "../../components/ui";
import { useSignup } from "./api";
import { AuthLayout } from "./auth-layout";
import { OAuthButtons } from "./oauth-buttons";
import { passwordAcceptable } from "./password-rules";
import { PasswordRulesList } from "./password-rules-list";

export function SignupPage() {
  const signup = useSignup();
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [localError, setLocalError] = useState<Error | null>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!name.trim()) return setLocalError(new Error("Please enter your name."));
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) return setLocalError(new Error("Please enter a valid e-mail address."));
    if (!passwordAcceptable(password)) return setLocalError(new Error("The password doesn't meet every rule yet."));
    setLocalError(null);
    signup.mutate({ name: name.trim(), email: email.trim(), password });
  }

  if (signup.isSuccess) {
    return (
      <AuthLayout title="Check your e-mail" footer={<Link to="/login">Go to log in</Link>}>
        <Notice tone="success">
          We sent a verification link to <strong className="wrap-anywhere">{signup.data.user.email}</strong>. Follow it to activate your account.
        </Notice>
        <p className="muted">You can already log in; creating API keys and buying credits unlock once your e-mail is verified.</p>
      </AuthLayout>
    );
  }

  return (
    <AuthLayout title="Create your account" footer={<span>Already have an account? <Link to="/login">Log in</Link></span>}>
      <OAuthButtons />
      <form onSubmit={submit} className="form" noValidate>
        <label className="field">
          <span>Name</span>
          <input name="name" autoComplete="name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="field">
          <span>E-mail</span>
          <input type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label className="field">
          <span>Password</span>
          <input
            type="password" name="password" autoComplete="new-password" required aria-describedby="signup-password-rules"
            value={password} onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <PasswordRulesList password={password} id="signup-password-rules" />
        <ErrorAlert error={localError ?? signup.error} />
        <button type="submit" className="btn btn-primary btn-block" disabled={signup.isPending}>
          {signup.isPending ? "Creating account…" : "Create account"}
        </button>
      </form>
    </AuthLayout>
  );
}
