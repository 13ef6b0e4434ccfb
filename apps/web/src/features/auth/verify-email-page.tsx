import { useEffect, useRef } from "react";
import { Link, useSearchParams } from "react-router-dom";
import { ErrorAlert, Notice, Spinner } from "../../components/ui";
import { useMe, useVerifyEmail } from "./api";
import { AuthLayout } from "./auth-layout";

/** The link target of the verification mail (CONTRACT 2): posts the token once. */
export function VerifyEmailPage() {
  const [params] = useSearchParams();
  const token = params.get("token") ?? "";
  const verify = useVerifyEmail();
  const me = useMe();
  const sent = useRef(false);

  useEffect(() => {
    // Tokens are single-use: never post twice (React strict mode runs effects twice in development).
    if (!token || sent.current) return;
    sent.current = true;
    verify.mutate({ token });
  }, [token, verify]);

  const next = me.data ? "/dashboard" : "/login";
  return (
    <AuthLayout title="Verify your e-mail" footer={<Link to={next}>{me.data ? "Go to the dashboard" : "Go to log in"}</Link>}>
      {!token ? <ErrorAlert error={new Error("This link has no token. Open the link from the e-mail again.")} /> : null}
      {verify.isPending ? <Spinner label="Verifying…" /> : null}
      {verify.isSuccess ? <Notice tone="success">Your e-mail address is verified. Every feature is now unlocked.</Notice> : null}
      <ErrorAlert error={verify.error} />
    </AuthLayout>
  );
}
