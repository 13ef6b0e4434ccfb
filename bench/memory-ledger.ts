// Bench only (BENCH_LEDGER=memory): a Ledger kept in process memory, so a run can show what the gateway adds
// without any database write on the request path. It keeps the real ledger's rules for one instance (balance
// never below zero, one close per hold, idempotent credits) but stores only balances and open holds.
import type { CreditResult, HoldResult, Ledger, LedgerEntry } from "@gw/billing";

export function createMemoryLedger(): Ledger {
  const balances = new Map<string, number>();
  const holds = new Map<string, number>();
  const credited = new Set<string>();
  const balanceOf = (userId: string) => balances.get(userId) ?? 0;
  // A cost above the hold is drawn from the rest of the balance, never below zero (as the real ledger does).
  const chargeable = (userId: string, holdId: string, cost: number) => {
    const held = holds.get(holdId);
    return held === undefined ? 0 : Math.min(Math.max(0, cost), held + balanceOf(userId));
  };
  const close = (userId: string, holdId: string, cost: number) => {
    const held = holds.get(holdId);
    if (held === undefined) return 0;
    const charged = chargeable(userId, holdId, cost);
    holds.delete(holdId);
    balances.set(userId, balanceOf(userId) + held - charged);
    return charged;
  };

  // Not a direct literal: `flush` (the in-memory reservations' write-out) may or may not be on Ledger yet.
  const ledger = {
    async balance(userId: string) {
      return balanceOf(userId);
    },
    async credit(userId: string, amount: number, opts: { idempotencyKey: string }): Promise<CreditResult> {
      if (credited.has(opts.idempotencyKey)) return { applied: false, balance: balanceOf(userId) };
      credited.add(opts.idempotencyKey);
      balances.set(userId, Math.max(0, balanceOf(userId) + amount));
      return { applied: true, balance: balanceOf(userId) };
    },
    async hold(userId: string, amount: number, opts: { holdId: string }): Promise<HoldResult> {
      const balance = balanceOf(userId);
      if (balance < amount) return { ok: false, balance };
      balances.set(userId, balance - amount);
      holds.set(opts.holdId, amount);
      return { ok: true, balance: balance - amount };
    },
    async settle(userId: string, holdId: string, cost: number) {
      return close(userId, holdId, cost);
    },
    chargeable,
    async release(userId: string, holdId: string) {
      close(userId, holdId, 0);
    },
    async entries(): Promise<LedgerEntry[]> {
      return [];
    },
    async releaseExpiredHolds() {
      return 0;
    },
    async verify() {
      return { ok: true, users: balances.size, problems: [] };
    },
    stats() {
      return { queuedEntries: 0, openHolds: holds.size, reservedMicros: 0 };
    },
    async flush() {},
    async flushCharges() {},
    async close() {},
  };
  return ledger;
}
