import { useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { Card, EmptyState, ErrorAlert, PageTitle, Spinner } from "../../components/ui";
import { formatCost, formatDay } from "../../lib/format";
import { AdminNav } from "./admin-nav";
import { useAdminUsers, type UserStatusFilter } from "./api";

export function AdminUsersPage() {
  const [draft, setDraft] = useState("");
  const [query, setQuery] = useState("");
  const [status, setStatus] = useState<UserStatusFilter | "">("");
  const users = useAdminUsers(query, status);
  const rows = users.data?.pages.flatMap((page) => page.users);

  function search(event: FormEvent) {
    event.preventDefault();
    setQuery(draft.trim());
  }

  return (
    <>
      <PageTitle subtitle="Customers, their balances and spend; open one to adjust credits or suspend it.">Admin</PageTitle>
      <AdminNav />
      <Card title="Users">
        <form className="form form-inline" onSubmit={search} role="search">
          <label className="field grow">
            <span>E-mail or name</span>
            <input name="user-query" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="Search users" />
          </label>
          <label className="field">
            <span>Status</span>
            <select name="user-status" value={status} onChange={(e) => setStatus(e.target.value as UserStatusFilter | "")}>
              <option value="">Any</option>
              <option value="active">Active</option>
              <option value="suspended">Suspended</option>
            </select>
          </label>
          <button type="submit" className="btn">Search</button>
        </form>
        {users.isPending ? <Spinner /> : null}
        <ErrorAlert error={users.error} />
        {rows && rows.length === 0 ? <EmptyState title="No users found" /> : null}
        {rows && rows.length > 0 ? (
          <div className="table-wrap">
            <table className="table" data-testid="admin-users">
              <thead>
                <tr>
                  <th scope="col">E-mail</th><th scope="col">Name</th><th scope="col">Plan</th><th scope="col" className="num">Balance</th>
                  <th scope="col" className="num">Spend (30 days)</th><th scope="col">Status</th><th scope="col">Joined</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((u) => (
                  <tr key={u.id}>
                    <td data-label="E-mail" className="wrap-anywhere"><Link to={`/dashboard/admin/users/${encodeURIComponent(u.id)}`}>{u.email}</Link></td>
                    <td data-label="Name">{u.name}</td>
                    <td data-label="Plan">{u.plan}</td>
                    <td data-label="Balance" className="num">{formatCost(u.balance)}</td>
                    <td data-label="Spend (30 days)" className="num">{formatCost(u.spend_30d)}</td>
                    <td data-label="Status"><span className={`badge badge-${u.status}`}>{u.status}</span></td>
                    <td data-label="Joined">{formatDay(u.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        {users.hasNextPage ? (
          <button type="button" className="btn" disabled={users.isFetchingNextPage} onClick={() => void users.fetchNextPage()}>
            {users.isFetchingNextPage ? "Loading…" : "Show more users"}
          </button>
        ) : null}
      </Card>
    </>
  );
}
