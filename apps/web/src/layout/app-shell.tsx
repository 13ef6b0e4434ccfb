import { useRef, useState, type KeyboardEvent } from "react";
import { NavLink, Outlet, useNavigate } from "react-router-dom";
import { ErrorAlert, Notice } from "../components/ui";
import { useAdminAccess } from "../features/admin/api";
import { useLogout, useMe, useResendVerification } from "../features/auth/api";

const NAV = [
  { to: "/dashboard", label: "Overview", end: true },
  { to: "/dashboard/keys", label: "API keys" },
  { to: "/dashboard/usage", label: "Usage" },
  { to: "/dashboard/billing", label: "Billing" },
  { to: "/dashboard/playground", label: "Playground" },
  { to: "/settings", label: "Settings" },
  { to: "/status", label: "Status" },
];

function VerifyBanner() {
  const resend = useResendVerification();
  return (
    <Notice tone="warning">
      Your e-mail address is not verified yet. Follow the link we sent you to create API keys and buy credits.{" "}
      {resend.isSuccess ? (
        <strong>Sent! Check your inbox.</strong>
      ) : (
        <button type="button" className="btn-link" onClick={() => resend.mutate()} disabled={resend.isPending}>
          Resend the e-mail
        </button>
      )}
      <ErrorAlert error={resend.error} />
    </Notice>
  );
}

export function AppShell() {
  const me = useMe();
  const logout = useLogout();
  const navigate = useNavigate();
  const [menuOpen, setMenuOpen] = useState(false);
  const menuToggle = useRef<HTMLButtonElement>(null);
  const user = me.data;
  // the Admin section shows to admins only (the server refuses everyone else anyway)
  const adminAccess = useAdminAccess(Boolean(user));
  const nav = user && adminAccess.data?.admin ? [...NAV.slice(0, -2), { to: "/dashboard/admin", label: "Admin" }, ...NAV.slice(-2)] : NAV;

  // Escape closes the open menu (phone width) and hands focus back to its button, as a disclosure menu does.
  function closeMenuOnEscape(event: KeyboardEvent) {
    if (event.key !== "Escape" || !menuOpen) return;
    setMenuOpen(false);
    menuToggle.current?.focus();
  }

  return (
    <div className="shell">
      <a href="#main" className="skip-link">Skip to content</a>
      <header className="topbar" onKeyDown={closeMenuOnEscape}>
        <NavLink to="/dashboard" className="brand"><span className="brand-mark" aria-hidden="true" /> AI Gateway</NavLink>
        <button
          ref={menuToggle} type="button" className="btn menu-toggle" aria-expanded={menuOpen} aria-controls="main-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" className={menuOpen ? "nav open" : "nav"}>
          {nav.map((item) => (
            <NavLink key={item.to} to={item.to} end={item.end} onClick={() => setMenuOpen(false)}>
              {item.label}
            </NavLink>
          ))}
        </nav>
        {user ? (
          <div className="user-menu">
            <span className="user-email" title={user.email}>{user.email}</span>
            <button
              type="button" className="btn btn-small" disabled={logout.isPending}
              onClick={() => logout.mutate(undefined, { onSettled: () => navigate("/login", { replace: true }) })}
            >
              Log out
            </button>
          </div>
        ) : me.isPending ? null : (
          <div className="user-menu"><NavLink to="/login" className="btn btn-small">Log in</NavLink></div>
        )}
      </header>
      <main id="main" className="content" tabIndex={-1}>
        {user && !user.email_verified ? <VerifyBanner /> : null}
        <Outlet />
      </main>
    </div>
  );
}
