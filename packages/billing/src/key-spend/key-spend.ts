import type { Database } from "@gw/db";
import type { Logger } from "pino";
import { periodStart, type Clock, type LimitReset } from "@gw/shared";
import { ChainWriter, type Movement } from "../ledger/chain-writer";
import { LEDGER_COLLECTION, LedgerRepository } from "../ledger/repository";
import type { Ledger } from "../ledger/types";

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

export interface KeyUsage {
  /** settled charges of the current period, micro-dollars */
  spentPeriod: number;
  spentTotal: number;
  requestsTotal: number;
}

/** The fields of a settle entry of the ledger (its `meta` is the request's usage record) this module reads. */
interface SettleDoc {
  cost?: number;
  meta?: { keyId?: string; createdAt?: Date };
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
  private readonly settles: LedgerRepository["collection"];
  /** chains whose opening (the period's spend before the limit applied) is known to be written */
  private readonly opened = new Set<string>();

  private constructor(db: Database, private readonly clock: Clock, private readonly ledger: Ledger, private readonly logger: Logger) {
    this.repo = new LedgerRepository(db, KEY_SPEND_COLLECTION);
    this.writer = new ChainWriter(this.repo, clock);
    this.settles = db.connection.collection(LEDGER_COLLECTION);
  }

  static async create(db: Database, clock: Clock, ledger: Ledger, logger: Logger): Promise<KeySpend> {
    const spend = new KeySpend(db, clock, ledger, logger);
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
    let spent = 0;
    const cursor = this.settles.find<SettleDoc>({ userId, kind: "settle", "meta.keyId": keyId, "meta.createdAt": { $gte: since } }, { projection: { _id: 0, cost: 1 } });
    for await (const doc of cursor) spent += doc.cost ?? 0;
    return spent;
  }

  /** Spend and requests per key of this user, from the usage records; `keys` names each key's period. */
  async usage(userId: string, keys: Array<{ keyId: string; reset: LimitReset }>): Promise<Map<string, KeyUsage>> {
    const result = new Map<string, KeyUsage & { since: number }>();
    for (const k of keys) result.set(k.keyId, { spentPeriod: 0, spentTotal: 0, requestsTotal: 0, since: periodStart(k.reset, this.clock.now()).getTime() });
    if (keys.length === 0) return result;
    await this.ledger.flushCharges(userId);
    const cursor = this.settles.find<SettleDoc>(
      { userId, kind: "settle", "meta.keyId": { $in: keys.map((k) => k.keyId) } },
      { projection: { _id: 0, cost: 1, "meta.keyId": 1, "meta.createdAt": 1 } },
    );
    for await (const doc of cursor) {
      const entry = doc.meta?.keyId === undefined ? undefined : result.get(doc.meta.keyId);
      if (!entry) continue;
      const cost = doc.cost ?? 0;
      entry.requestsTotal += 1;
      entry.spentTotal += cost;
      if ((doc.meta?.createdAt?.getTime() ?? 0) >= entry.since) entry.spentPeriod += cost;
    }
    return result;
  }
}
