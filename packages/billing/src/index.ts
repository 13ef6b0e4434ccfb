export * from "./ledger/index";
