import { NavLink } from "react-router-dom";

/** The Admin section's own tabs. */
export function AdminNav() {
  return (
    <nav aria-label="Admin" className="tabs">
      <NavLink to="/dashboard/admin" end>Users</NavLink>
      <NavLink to="/dashboard/admin/overview">Overview</NavLink>
      <NavLink to="/dashboard/admin/models">Models</NavLink>
      <NavLink to="/dashboard/admin/plans">Plans &amp; packages</NavLink>
      <NavLink to="/dashboard/admin/codes">Redemption codes</NavLink>
      <NavLink to="/dashboard/admin/audit">Audit log</NavLink>
    </nav>
  );
}
