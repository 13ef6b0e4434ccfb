import { dollarsToMicros, invalidParameter, missingParameter } from "@gw/shared";

export const MIN_PURCHASE_DOLLARS = 1;
export const MAX_PURCHASE_DOLLARS = 10_000;

/**
 * CONTRACT 6: a purchase amount is a number of dollars, 1..10000, with at most two decimals.
 * Returns micro-dollars. Strings, NaN and infinities are refused rather than coerced.
 */
export function purchaseAmountMicros(value: unknown, name = "amount"): number {
  if (value === undefined || value === null) throw missingParameter(name);
  if (typeof value !== "number" || !Number.isFinite(value)) throw invalidParameter(name, "must be a number of dollars");
  if (value < MIN_PURCHASE_DOLLARS || value > MAX_PURCHASE_DOLLARS) {
    throw invalidParameter(name, `must be between ${MIN_PURCHASE_DOLLARS} and ${MAX_PURCHASE_DOLLARS} dollars`);
  }
  return centsExact(value, name);
}

/** Two decimals at most: the cents value must be a whole number (tolerating binary float noise like 19.99). */
function centsExact(value: number, name: string): number {
  const cents = value * 100;
  if (Math.abs(cents - Math.round(cents)) > 1e-6) throw invalidParameter(name, "must have at most two decimals");
  return dollarsToMicros(Math.round(cents) / 100);
}

/** The largest balance threshold accepted (dollars). */
export const MAX_THRESHOLD_DOLLARS = 1_000_000;

/** A balance threshold: dollars, 0..MAX_THRESHOLD_DOLLARS, at most two decimals; micro-dollars. */
export function thresholdMicros(value: unknown, name: string): number {
  if (value === undefined || value === null) throw missingParameter(name);
  if (typeof value !== "number" || !Number.isFinite(value)) throw invalidParameter(name, "must be a number of dollars");
  if (value < 0 || value > MAX_THRESHOLD_DOLLARS) throw invalidParameter(name, `must be between 0 and ${MAX_THRESHOLD_DOLLARS} dollars`);
  return centsExact(value, name);
}

/** Only US dollars are sold: credits are denominated in USD. */
export function purchaseCurrency(value: unknown): "usd" {
  if (value === undefined || value === null) return "usd";
  if (typeof value !== "string" || value.toLowerCase() !== "usd") throw invalidParameter("currency", "only 'usd' is supported");
  return "usd";
}
