const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });

/** Dollars with cents, or more precision for sub-cent amounts (per-request costs). */
export function formatMoney(dollars: number): string {
  if (dollars !== 0 && Math.abs(dollars) < 0.01) return `$${dollars.toFixed(6).replace(/0+$/, "")}`;
  return usd.format(dollars);
}

const usdCost = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 });

/** A request's cost as the API states it, to the micro-dollar: $0.012002 is not rounded to $0.01. */
export function formatCost(dollars: number): string {
  return usdCost.format(dollars);
}

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
