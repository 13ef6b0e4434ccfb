import type { ReactNode } from "react";
import { EmptyState, PageTitle, Spinner } from "../../components/ui";
import { useAdminAccess } from "./api";

/** The Admin pages for admins; anyone else sees that they are not available (the server refuses them anyway). */
export function RequireAdmin({ children }: { children: ReactNode }) {
  const access = useAdminAccess();
  if (access.isPending) return <Spinner />;
  if (!access.data?.admin) {
    return (
      <>
        <PageTitle>Admin</PageTitle>
        <EmptyState title="This section is for the gateway's admins only." />
      </>
    );
  }
  return <>{children}</>;
}
