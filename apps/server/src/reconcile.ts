// `npm run reconcile`: proves (or repairs) ledger invariants. Filled in by the billing package.
console.log("reconcile: nothing to do yet");
