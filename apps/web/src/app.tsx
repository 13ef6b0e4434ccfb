import { Navigate, Route, Routes } from "react-router-dom";
import { EmptyState, PageTitle } from "./components/ui";
import { RedirectIfSignedIn, RequireAuth, SessionWatcher } from "./features/auth/auth-provider";
import { ForgotPasswordPage } from "./features/auth/forgot-password-page";
import { LoginPage } from "./features/auth/login-page";
import { ResetPasswordPage } from "./features/auth/reset-password-page";
import { SignupPage } from "./features/auth/signup-page";
import { VerifyEmailPage } from "./features/auth/verify-email-page";
import { AdminAuditPage } from "./features/admin/audit-page";
import { AdminCodesPage } from "./features/admin/codes-page";
import { AdminModelsPage } from "./features/admin/models-page";
import { AdminOverviewPage } from "./features/admin/overview-page";
import { AdminPlansPage } from "./features/admin/plans-page";
import { RequireAdmin } from "./features/admin/require-admin";
import { AdminUserPage } from "./features/admin/user-page";
import { AdminUsersPage } from "./features/admin/users-page";
import { BillingPage } from "./features/billing/billing-page";
import { KeysPage } from "./features/keys/keys-page";
import { OverviewPage } from "./features/overview/overview-page";
import { PlaygroundPage } from "./features/playground/playground-page";
import { SettingsPage } from "./features/settings/settings-page";
import { StatusPage } from "./features/status/status-page";
import { UsagePage } from "./features/usage/usage-page";
import { AppShell } from "./layout/app-shell";

/** A page of its own for screen readers too: its heading and tab title say it is missing, not the page before. */
function NotFound() {
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <EmptyState title="Nothing lives at this address."><a href="/dashboard">Go to the dashboard</a></EmptyState>
    </>
  );
}

export function App() {
  return (
    <SessionWatcher>
      <Routes>
        <Route path="/login" element={<RedirectIfSignedIn><LoginPage /></RedirectIfSignedIn>} />
        <Route path="/signup" element={<RedirectIfSignedIn><SignupPage /></RedirectIfSignedIn>} />
        <Route path="/verify-email" element={<VerifyEmailPage />} />
        <Route path="/forgot-password" element={<ForgotPasswordPage />} />
        <Route path="/reset-password" element={<ResetPasswordPage />} />
        <Route element={<AppShell />}>
          <Route path="/status" element={<StatusPage />} />
        </Route>
        <Route element={<RequireAuth><AppShell /></RequireAuth>}>
          <Route path="/dashboard" element={<OverviewPage />} />
          <Route path="/dashboard/keys" element={<KeysPage />} />
          <Route path="/dashboard/usage" element={<UsagePage />} />
          <Route path="/dashboard/billing" element={<BillingPage />} />
          <Route path="/dashboard/playground" element={<PlaygroundPage />} />
          <Route path="/dashboard/admin" element={<RequireAdmin><AdminUsersPage /></RequireAdmin>} />
          <Route path="/dashboard/admin/users/:id" element={<RequireAdmin><AdminUserPage /></RequireAdmin>} />
          <Route path="/dashboard/admin/codes" element={<RequireAdmin><AdminCodesPage /></RequireAdmin>} />
          <Route path="/dashboard/admin/overview" element={<RequireAdmin><AdminOverviewPage /></RequireAdmin>} />
          <Route path="/dashboard/admin/models" element={<RequireAdmin><AdminModelsPage /></RequireAdmin>} />
          <Route path="/dashboard/admin/plans" element={<RequireAdmin><AdminPlansPage /></RequireAdmin>} />
          <Route path="/dashboard/admin/audit" element={<RequireAdmin><AdminAuditPage /></RequireAdmin>} />
          <Route path="/settings" element={<SettingsPage />} />
          <Route path="/settings/*" element={<SettingsPage />} />
          <Route path="/dashboard/*" element={<NotFound />} />
        </Route>
        <Route path="/" element={<Navigate to="/dashboard" replace />} />
        <Route path="*" element={<main className="full-page"><NotFound /></main>} />
      </Routes>
    </SessionWatcher>
  );
}
