// Money is integer micro-dollars (1 USD = 1_000_000) everywhere inside; dollars only at the API edge.

export const MICROS_PER_DOLLAR = 1_000_000;

export const dollarsToMicros = (dollars: number): number => Math.round(dollars * MICROS_PER_DOLLAR);

/** Dollars as a number, rounded to the micro-dollar (no float noise such as 0.30000000000000004). */
export const microsToDollars = (micros: number): number => Math.round(micros) / MICROS_PER_DOLLAR;

export const dollarsToCents = (dollars: number): number => Math.round(dollars * 100);

export const centsToMicros = (cents: number): number => cents * 10_000;
