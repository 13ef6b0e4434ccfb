import type { Database } from "@gw/db";
import type { Clock } from "@gw/shared";
import { ChainWriter, type Movement } from "./chain-writer";
import { LedgerRepository, toEntry } from "./repository";
import type { CreditKind, CreditResult, HoldResult, Ledger, LedgerEntry, LedgerEntryKind } from "./types";

export interface LedgerOptions {
  /** a hold never closed (crashed instance) is released after this long */
  holdTtlSeconds: number;
  /** how often the sweeper looks for expired holds; 0 disables the timer (tests call releaseExpiredHolds) */
  sweepIntervalMs?: number;
}

const holdKey = (holdId: string) => `hold:${holdId}`;
/** settle and release share one key, so exactly one of them can close a hold */
const closeKey = (holdId: string) => `close:${holdId}`;

function assertAmount(amount: number, what: string): void {
  if (!Number.isSafeInteger(amount)) throw new TypeError(`${what} must be an integer number of micro-dollars`);
}

export async function createLedger(db: Database, clock: Clock, options: LedgerOptions): Promise<Ledger> {
  const repo = new LedgerRepository(db);
  await repo.ensureIndexes();
  const writer = new ChainWriter(repo, clock);
  /** open holds made by this instance: saves a read when they are closed */
  const openHolds = new Map<string, number>();

  async function holdAmount(holdId: string): Promise<number | undefined> {
    const known = openHolds.get(holdId);
    if (known !== undefined) return known;
    const doc = await repo.findByIdempotencyKey(holdKey(holdId));
    return doc ? -doc.amount : undefined;
  }

  async function close(userId: string, holdId: string, kind: "settle" | "release", cost: number, meta?: Record<string, unknown>): Promise<void> {
    const held = await holdAmount(holdId);
    if (held === undefined) throw new Error(`ledger: unknown hold ${holdId}`);
    const charged = Math.min(Math.max(cost, 0), held);
    const movement: Movement = {
      kind: charged > 0 ? kind : "release",
      amount: held - charged,
      idempotencyKey: closeKey(holdId),
      requireCover: false,
      holdId,
      cost: charged,
      meta,
    };
    await writer.append(userId, movement);
    openHolds.delete(holdId);
  }

  const ledger: Ledger = {
    async balance(userId) {
      return (await writer.head(userId)).balance;
    },

    async credit(userId, amount, opts: { kind: CreditKind; idempotencyKey: string; meta?: Record<string, unknown> }): Promise<CreditResult> {
      assertAmount(amount, "credit amount");
      const outcome = await writer.append(userId, {
        kind: opts.kind,
        amount,
        idempotencyKey: opts.idempotencyKey,
        // a negative adjustment may not take the balance below zero
        requireCover: amount < 0,
        meta: opts.meta,
      });
      if (outcome.status === "refused") throw new RangeError("ledger: adjustment would make the balance negative");
      return { applied: outcome.status === "applied", balance: outcome.balance };
    },

    async hold(userId, amount, opts): Promise<HoldResult> {
      assertAmount(amount, "hold amount");
      if (amount < 0) throw new RangeError("ledger: hold amount must be >= 0");
      const outcome = await writer.append(userId, {
        kind: "hold",
        amount: -amount,
        idempotencyKey: holdKey(opts.holdId),
        requireCover: true,
        holdId: opts.holdId,
        expiresAt: new Date(clock.now() + options.holdTtlSeconds * 1000),
        meta: opts.meta,
      });
      if (outcome.status === "refused") return { ok: false, balance: outcome.balance };
      openHolds.set(opts.holdId, amount);
      return { ok: true, balance: outcome.balance };
    },

    settle(userId, holdId, cost, meta) {
      assertAmount(cost, "cost");
      return close(userId, holdId, "settle", cost, meta);
    },

    release(userId, holdId) {
      return close(userId, holdId, "release", 0);
    },

    async entries(userId, opts = {}): Promise<LedgerEntry[]> {
      const docs = await repo.entries(userId, { limit: Math.min(opts.limit ?? 50, 500), beforeSeq: opts.beforeSeq, kinds: opts.kinds as LedgerEntryKind[] | undefined });
      return docs.map(toEntry);
    },

    async releaseExpiredHolds(): Promise<number> {
      let released = 0;
      for (;;) {
        const expired = await repo.expiredOpenHolds(new Date(clock.now()), 200);
        if (expired.length === 0) return released;
        const closed = await repo.findByIdempotencyKeys(expired.map((h) => closeKey(h.holdId ?? "")));
        const closedKeys = new Set(closed.map((c) => c.idempotencyKey));
        for (const hold of expired) {
          if (!hold.holdId || closedKeys.has(closeKey(hold.holdId))) continue;
          const outcome = await writer.append(hold.userId, {
            kind: "release",
            amount: -hold.amount,
            idempotencyKey: closeKey(hold.holdId),
            requireCover: false,
            holdId: hold.holdId,
            cost: 0,
            meta: { reason: "hold expired" },
          });
          if (outcome.status === "applied") released += 1;
          openHolds.delete(hold.holdId);
        }
        await repo.markSwept(expired.map((h) => h._id));
      }
    },

    async verify(userId) {
      const users = userId ? [userId] : await repo.userIds();
      const problems: string[] = [];
      for (const id of users) {
        let expectedSeq = 1;
        let balance = 0;
        for (const doc of await repo.chain(id)) {
          if (doc.seq !== expectedSeq) problems.push(`${id}: gap or duplicate at seq ${doc.seq} (expected ${expectedSeq})`);
          balance += doc.amount;
          if (doc.balanceAfter !== balance) problems.push(`${id}: seq ${doc.seq} balanceAfter ${doc.balanceAfter} != running sum ${balance}`);
          if (doc.balanceAfter < 0) problems.push(`${id}: seq ${doc.seq} negative balance ${doc.balanceAfter}`);
          expectedSeq = doc.seq + 1;
        }
      }
      return { ok: problems.length === 0, users: users.length, problems };
    },

    async close() {
      if (timer) clearInterval(timer);
    },
  };

  const interval = options.sweepIntervalMs ?? 60_000;
  const timer = interval > 0
    ? setInterval(() => { ledger.releaseExpiredHolds().catch(() => undefined); }, interval)
    : undefined;
  timer?.unref();
  return ledger;
}
