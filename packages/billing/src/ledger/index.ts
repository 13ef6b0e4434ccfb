export * from "./types";
export { createLedger, type LedgerOptions } from "./ledger";
