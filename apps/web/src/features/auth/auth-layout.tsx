import { useEffect, type ReactNode } from "react";
import { Link } from "react-router-dom";

export function AuthLayout({ title, children, footer }: { title: string; children: ReactNode; footer?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · AI Gateway`;
  }, [title]);
  return (
    <main className="auth-page">
      <div className="auth-card">
        <Link to="/" className="brand brand-center" aria-label="AI Gateway home">
          <span className="brand-mark" aria-hidden="true" /> AI Gateway
        </Link>
        <h1>{title}</h1>
        {children}
        {footer ? <div className="auth-footer">{footer}</div> : null}
      </div>
    </main>
  );
}
