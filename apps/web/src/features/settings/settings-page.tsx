import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router-dom";
import { Card, ErrorAlert, Notice, PageTitle } from "../../components/ui";
import { formatDay } from "../../lib/format";
import { useMe } from "../auth/api";
import { passwordAcceptable } from "../auth/password-rules";
import { PasswordRulesList } from "../auth/password-rules-list";
import { useChangePassword, useDeleteAccount, useUpdateProfile } from "./api";

/** invalid_credentials here means the current password was wrong: there is no e-mail field to blame. */
const PASSWORD_CHECK_MESSAGES = { invalid_credentials: "Your current password is incorrect." };

function ProfileCard() {
  const me = useMe();
  const update = useUpdateProfile();
  const [name, setName] = useState(me.data?.name ?? "");
  const user = me.data;
  if (!user) return null;
  // "Profile saved." (or a refusal) describes the name that was sent: editing it again clears that answer.
  return (
    <Card title="Profile">
      <form className="form form-narrow" onSubmit={(e: FormEvent) => { e.preventDefault(); update.mutate({ name: name.trim() }); }}>
        <label className="field">
          <span>Name</span>
          <input name="name" autoComplete="name" value={name} onChange={(e) => { setName(e.target.value); if (!update.isPending) update.reset(); }} required maxLength={100} />
        </label>
        <p className="muted">E-mail: <strong className="wrap-anywhere">{user.email}</strong> {user.email_verified ? "(verified)" : "(not verified yet)"} · member since {formatDay(user.created_at)}</p>
        <ErrorAlert error={update.error} />
        {update.isSuccess ? <Notice tone="success">Profile saved.</Notice> : null}
        <button type="submit" className="btn btn-primary" disabled={update.isPending || !name.trim() || name.trim() === user.name}>Save</button>
      </form>
    </Card>
  );
}

function PasswordCard() {
  const change = useChangePassword();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [localError, setLocalError] = useState<Error | null>(null);
  // A new attempt is being typed: the last answer ("Password changed.", a refusal) no longer describes the form.
  function edited() {
    if (!change.isPending) change.reset();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!passwordAcceptable(next)) return setLocalError(new Error("The new password doesn't meet every rule yet."));
    setLocalError(null);
    change.mutate({ current_password: current, new_password: next }, { onSuccess: () => { setCurrent(""); setNext(""); } });
  }

  return (
    <Card title="Change password">
      <form className="form form-narrow" onSubmit={submit} noValidate>
        <label className="field">
          <span>Current password</span>
          <input type="password" name="current-password" autoComplete="current-password" value={current} onChange={(e) => { setCurrent(e.target.value); edited(); }} />
        </label>
        <label className="field">
          <span>New password</span>
          <input type="password" name="new-password" autoComplete="new-password" aria-describedby="settings-password-rules" value={next} onChange={(e) => { setNext(e.target.value); edited(); }} />
        </label>
        <PasswordRulesList password={next} id="settings-password-rules" />
        <ErrorAlert error={localError ?? change.error} messages={PASSWORD_CHECK_MESSAGES} />
        {change.isSuccess ? <Notice tone="success">Password changed. Other sessions were signed out.</Notice> : null}
        <button type="submit" className="btn btn-primary" disabled={change.isPending || !next}>Change password</button>
      </form>
    </Card>
  );
}

/** The typed phrase that unlocks deletion: deliberate, and impossible to trigger by a stray click. */
const DELETE_PHRASE = "delete my account";

function DeleteCard() {
  const del = useDeleteAccount();
  const navigate = useNavigate();
  const [phrase, setPhrase] = useState("");
  const [password, setPassword] = useState("");
  const ready = phrase.trim().toLowerCase() === DELETE_PHRASE;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!ready) return;
    del.mutate(password ? { password } : {}, { onSuccess: () => navigate("/login?deleted=1", { replace: true }) });
  }

  return (
    <Card title="Delete account" className="danger-zone">
      <p>
        This permanently deletes your account: every API key is revoked, an active subscription is cancelled and your
        personal data is erased. Remaining credits are lost.
      </p>
      <form className="form form-narrow" onSubmit={submit} noValidate>
        <label className="field">
          <span>Type <strong>{DELETE_PHRASE}</strong> to confirm</span>
          <input name="confirm-phrase" autoComplete="off" value={phrase} onChange={(e) => setPhrase(e.target.value)} />
        </label>
        <label className="field">
          <span>Password <span className="muted">(leave empty if you sign in with Google or GitHub)</span></span>
          <input type="password" name="delete-password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <ErrorAlert error={del.error} messages={PASSWORD_CHECK_MESSAGES} />
        <button type="submit" className="btn btn-danger" disabled={!ready || del.isPending}>
          {del.isPending ? "Deleting…" : "Delete my account permanently"}
        </button>
      </form>
    </Card>
  );
}

export function SettingsPage() {
  return (
    <>
      <PageTitle>Settings</PageTitle>
      <ProfileCard />
      <PasswordCard />
      <DeleteCard />
    </>
  );
}
