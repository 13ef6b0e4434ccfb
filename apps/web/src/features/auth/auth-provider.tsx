import { useQueryClient } from "@tanstack/react-query";
import { useEffect, type ReactNode } from "react";
import { Navigate, useLocation } from "react-router-dom";
import { FullPageSpinner, ErrorAlert } from "../../components/ui";
import { onSessionLost, peekSessionLoss } from "../../lib/session-events";
import { meKey, safeNext, useMe } from "./api";

/**
 * Listens for a lost session reported by any API call and re-checks /me. When the session is really gone,
 * RequireAuth sends the user to log in and back; a late 401 from a previous session's request changes nothing.
 */
export function SessionWatcher({ children }: { children: ReactNode }) {
  const qc = useQueryClient();
  useEffect(() => onSessionLost(() => void qc.refetchQueries({ queryKey: meKey, exact: true })), [qc]);
  return children;
}

/** Renders nothing of a protected page until /me has answered: no flash of unauthenticated content. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const me = useMe();
  const location = useLocation();
  if (me.isPending) return <FullPageSpinner />;
  if (me.isError) {
    return (
      <div className="full-page">
        <ErrorAlert error={me.error} title="Could not load your account" />
        <button type="button" className="btn" onClick={() => void me.refetch()}>Try again</button>
      </div>
    );
  }
  if (!me.data) {
    // The page's own navigation after logout or deletion is a transition: this sync re-render comes first and decides.
    const ended = peekSessionLoss();
    if (ended === "logged_out") return <Navigate to="/login" replace />;
    if (ended === "account_deleted") return <Navigate to="/login?deleted=1" replace />;
    const next = `${location.pathname}${location.search}`;
    const reason = ended === "session_expired" ? "&reason=expired" : "";
    return <Navigate to={`/login?next=${encodeURIComponent(next)}${reason}`} replace />;
  }
  return children;
}

/** Login and signup pages: a signed-in user goes straight to where they were heading. */
export function RedirectIfSignedIn({ children }: { children: ReactNode }) {
  const me = useMe();
  const location = useLocation();
  if (me.isPending) return <FullPageSpinner />;
  if (me.data) return <Navigate to={safeNext(new URLSearchParams(location.search).get("next"))} replace />;
  return children;
}
