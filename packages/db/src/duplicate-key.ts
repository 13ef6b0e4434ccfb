/**
 * A unique-index violation (code 11000): the insert that lost a race. Inserts at unique keys are the concurrency
 * primitive on FerretDB, which has no transactions and no atomic conditional update.
 */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === 11000;
}
