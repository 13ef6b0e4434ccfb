const cents = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });
// Under a cent, enough digits to show the amount (the API counts micro-dollars): $0.000007, not $0.00.
const subCent = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 });

/**
 * The one money format of the dashboard: dollars with cents ($9.90, $0.10), more digits only for an amount under a
 * cent ($0.004). A balance of $9.89995 reads $9.90 beside a $0.10 price, never $9.89995.
 */
export function formatMoney(dollars: number): string {
  if (dollars !== 0 && Math.abs(dollars) < 0.01) return subCent.format(dollars);
  return cents.format(dollars);
}

/**
 * The former name of the per-request format, kept so that pages written before the one money format (branches
 * merged after it) compile and show money the same way. New code calls formatMoney.
 */
export const formatCost = formatMoney;

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  return d.toLocaleString("en-US", { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export function formatDay(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  return d.toLocaleDateString("en-US", { year: "numeric", month: "short", day: "numeric" });
}

export function formatNumber(n: number): string {
  return n.toLocaleString("en-US");
}
