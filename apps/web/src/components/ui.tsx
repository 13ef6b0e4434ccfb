import { useEffect, useRef, type ReactNode } from "react";
import { errorMessage, type ErrorMessages } from "../lib/api-error";

export function Spinner({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="spinner" role="status" aria-live="polite">
      <span className="spinner-dot" aria-hidden="true" />
      {label}
    </div>
  );
}

export function FullPageSpinner() {
  return (
    <div className="full-page">
      <Spinner />
    </div>
  );
}

/** Shows an API or network error; focuses itself so keyboard and screen-reader users notice it. */
export function ErrorAlert({ error, title, messages }: { error: unknown; title?: string; messages?: ErrorMessages }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (error) ref.current?.focus();
  }, [error]);
  if (!error) return null;
  return (
    <div className="alert alert-error" role="alert" tabIndex={-1} ref={ref}>
      {title ? <strong>{title}: </strong> : null}
      {errorMessage(error, messages)}
    </div>
  );
}

export function Notice({ children, tone = "info" }: { children: ReactNode; tone?: "info" | "success" | "warning" }) {
  return (
    <div className={`alert alert-${tone}`} role="status">
      {children}
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children}
    </div>
  );
}

export function Card({ title, children, actions, className }: { title?: string; children: ReactNode; actions?: ReactNode; className?: string }) {
  return (
    <section className={className ? `card ${className}` : "card"} aria-label={title}>
      {title || actions ? (
        <header className="card-header">
          {title ? <h2>{title}</h2> : null}
          {actions}
        </header>
      ) : null}
      {children}
    </section>
  );
}

export function PageTitle({ children, subtitle }: { children: ReactNode; subtitle?: ReactNode }) {
  useEffect(() => {
    if (typeof children === "string") document.title = `${children} · AI Gateway`;
  }, [children]);
  return (
    <div className="page-title">
      <h1>{children}</h1>
      {subtitle ? <p className="muted">{subtitle}</p> : null}
    </div>
  );
}
