import type { Database } from "@gw/db";
import type { Logger } from "pino";
import { periodStart, type Clock, type LimitReset } from "@gw/shared";
import { ChainWriter, type Movement } from "../ledger/chain-writer";
import { LedgerRepository } from "../ledger/repository";
import type { Ledger } from "../ledger/types";
import type { UsageRepository, UsageTotalsRow } from "../usage/usage-repository";

/** The collection of the keys' spend chains: one chain per key and period, entries as the ledger's. */
export const KEY_SPEND_COLLECTION = "key_spend_entries";

/** A key's spend limit as its request sees it (from the verifier's cache). Money in micro-dollars. */
export interface KeyLimit {
  userId: string;
  keyId: string;
  limitMicros: number;
  reset: LimitReset;
}

export type KeyHoldResult =
  | { ok: true; chain: string }
  /** `remaining`: what the key may still spend this period */
  | { ok: false; remaining: number };

/** What the keys' usage is computed from: the user's usage totals as read at `now`. */
export interface SpendTotals {
  now: number;
  rows: UsageTotalsRow[];
}

export interface KeyUsage {
  /** settled charges of the current period, micro-dollars */
  spentPeriod: number;
  spentTotal: number;
  requestsTotal: number;
}

/**
 * CONTRACT 10: a key's spend per period, held and settled beside the balance so that a limit holds exactly under any
 * concurrency and across instances. Each (key, period) is a chain like a user's ledger chain (ChainWriter): its balance
 * starts at 0 and goes down by each request's hold, never below -limit (the hold is refused instead); the settle gives
 * back what the request did not use, a release all of it. Every entry is an insert at a unique position, so two
 * instances can never both take the last of a limit: FerretDB has neither transactions nor atomic updates.
 *
 * Only keys with a limit use it: two appends per request (group-committed per chain), none for other keys.
 */
export class KeySpend {
  private readonly repo: LedgerRepository;
  private readonly writer: ChainWriter;
  /** chains whose opening (the period's spend before the limit applied) is known to be written */
  private readonly opened = new Set<string>();

  private constructor(db: Database, private readonly clock: Clock, private readonly ledger: Ledger, private readonly usageRecords: UsageRepository, private readonly logger: Logger) {
    this.repo = new LedgerRepository(db, KEY_SPEND_COLLECTION);
    this.writer = new ChainWriter(this.repo, clock);
  }

  /** `usageRecords`: the spend a key had before its chain (or a list's totals) is read from the usage records, by `_id`. */
  static async create(db: Database, clock: Clock, ledger: Ledger, usageRecords: UsageRepository, logger: Logger): Promise<KeySpend> {
    const spend = new KeySpend(db, clock, ledger, usageRecords, logger);
    await spend.repo.ensureIndexes();
    return spend;
  }

  /** `<key>:<reset>:<period start>`: a new period (or a new reset) is a new chain, starting from nothing spent. */
  private chainOf(limit: Pick<KeyLimit, "keyId" | "reset">): { chain: string; since: Date } {
    const since = periodStart(limit.reset, this.clock.now());
    return { chain: `${limit.keyId}:${limit.reset}:${since.toISOString().slice(0, 10)}`, since };
  }

  /**
   * Reserves `amount` of the key's limit for one request, or says what is left. A chain's first use writes what the
   * key already spent in the period (a limit set on a key in use counts the period's earlier spend).
   */
  async hold(limit: KeyLimit, holdId: string, amount: number): Promise<KeyHoldResult> {
    const { chain, since } = this.chainOf(limit);
    await this.open(limit, chain, since);
    const outcome = await this.writer.append(chain, {
      kind: "hold", amount: -amount, idempotencyKey: `${chain}:${holdId}:hold`, requireCover: true, floor: -limit.limitMicros, holdId,
    });
    if (outcome.status === "refused") return { ok: false, remaining: Math.max(0, limit.limitMicros + outcome.balance) };
    return { ok: true, chain };
  }

  /**
   * Closes a hold charging `charged` (what the balance was charged), never past the limit. Never throws: the request
   * is already charged; a close that cannot be written leaves the hold counted (the key spends less, never more).
   */
  async settle(chain: string, holdId: string, held: number, charged: number, limitMicros: number): Promise<void> {
    await this.close(chain, holdId, {
      kind: "settle", amount: held - charged, upToBalance: true, floor: -limitMicros, cost: charged,
    });
  }

  /** Gives the whole hold back (the request failed); never throws, as `settle`. */
  async release(chain: string, holdId: string, held: number): Promise<void> {
    await this.close(chain, holdId, { kind: "release", amount: held });
  }

  /** One close per hold: a settle and a release share the idempotency key. */
  private async close(chain: string, holdId: string, movement: Pick<Movement, "kind" | "amount" | "upToBalance" | "floor" | "cost">): Promise<void> {
    try {
      await this.writer.append(chain, { ...movement, idempotencyKey: `${chain}:${holdId}:close`, requireCover: false, holdId });
    } catch (err) {
      this.logger.error({ err: (err as Error).message, chain, holdId }, "key spend: could not close a hold; it stays counted");
    }
  }

  /** What the key may still spend this period, holds in flight counted as spent. */
  async remaining(limit: KeyLimit): Promise<number> {
    const { chain, since } = this.chainOf(limit);
    const head = await this.writer.head(chain);
    const spent = head.seq > 0 ? -head.balance : await this.spentSince(limit.userId, limit.keyId, since);
    return Math.max(0, limit.limitMicros - spent);
  }

  private async open(limit: KeyLimit, chain: string, since: Date): Promise<void> {
    if (this.opened.has(chain)) return;
    const head = await this.writer.head(chain);
    if (head.seq === 0) {
      const spent = await this.spentSince(limit.userId, limit.keyId, since);
      // one opening per chain (its idempotency key): of two instances opening it at once, the first one's counts
      if (spent > 0) await this.writer.append(chain, { kind: "adjustment", amount: -spent, idempotencyKey: `${chain}:opening`, requireCover: false });
    }
    this.opened.add(chain);
  }

  /** The key's settled charges since `since`, from the usage records of the ledger. */
  private async spentSince(userId: string, keyId: string, since: Date): Promise<number> {
    await this.ledger.flushCharges(userId);
    const rows = await this.usageRecords.totals({ userId, keyId, from: since, to: new Date(this.clock.now() + 1) });
    return rows.reduce((sum, row) => sum + row.costMicros, 0);
  }

  /**
   * The user's usage totals (rows per day and key) that `usage` reads. They do not depend on the keys: a list starts
   * them beside its key reads.
   */
  async totals(userId: string): Promise<SpendTotals> {
    const now = this.clock.now();
    await this.ledger.flushCharges(userId);
    return { now, rows: await this.usageRecords.totals({ userId, from: new Date(0), to: new Date(now + 1) }) };
  }

  /** Spend and requests per key, from the user's `totals` (a period starts at a UTC midnight); `keys` names each key's period. */
  usage(totals: SpendTotals, keys: Array<{ keyId: string; reset: LimitReset }>): Map<string, KeyUsage> {
    const result = new Map<string, KeyUsage & { sinceDay: string }>();
    for (const k of keys) result.set(k.keyId, { spentPeriod: 0, spentTotal: 0, requestsTotal: 0, sinceDay: periodStart(k.reset, totals.now).toISOString().slice(0, 10) });
    for (const row of totals.rows) {
      const entry = row.keyId === undefined ? undefined : result.get(row.keyId);
      if (!entry) continue;
      entry.requestsTotal += row.requests;
      entry.spentTotal += row.costMicros;
      if (row.day >= entry.sinceDay) entry.spentPeriod += row.costMicros;
    }
    return result;
  }
}
