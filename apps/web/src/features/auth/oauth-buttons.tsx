/** Full-page navigations: the server redirects to the provider and back to /api/auth/callback (CONTRACT 2). */
export function OAuthButtons() {
  return (
    <div className="oauth">
      <a className="btn btn-oauth" href="/api/auth/oauth/google">
        <span aria-hidden="true" className="oauth-icon">G</span> Continue with Google
      </a>
      <a className="btn btn-oauth" href="/api/auth/oauth/github">
        <span aria-hidden="true" className="oauth-icon">⌥</span> Continue with GitHub
      </a>
      <div className="divider" role="separator"><span>or</span></div>
    </div>
  );
}
