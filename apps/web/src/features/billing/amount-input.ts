/** Dollars with at most two decimals, 1..10000 (CONTRACT 6); returns an error text or null. */
export function validateCustomAmount(raw: string): string | null {
  if (!/^\d+(\.\d{1,2})?$/.test(raw.trim())) return "Enter an amount in dollars, with at most two decimals.";
  const value = Number(raw);
  if (value < 1 || value > 10_000) return "The amount must be between $1 and $10,000.";
  return null;
}

/** Dollars with at most two decimals, 0 or more (a threshold); an error text or null. */
export function validateThreshold(raw: string): string | null {
  return /^\d+(\.\d{1,2})?$/.test(raw.trim()) ? null : "Enter an amount in dollars, with at most two decimals.";
}
