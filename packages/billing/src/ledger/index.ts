export * from "./types";
export { createLedger, type LedgerOptions } from "./ledger";
export { DEFAULT_RESERVATION_POLICY, type ReservationPolicy } from "./reservations";
export { LEDGER_COLLECTION } from "./repository";
export { ChainReader } from "./chain-reader";
