import type { Database } from "@gw/db";
import { newId, type Clock } from "@gw/shared";
import { ChainAudit } from "./chain-audit";
import { ChainWriter } from "./chain-writer";
import { Checkpoints } from "./checkpoints";
import { LedgerRepository, toEntry, type LedgerDoc } from "./repository";
import { ReservedUsers } from "./reserved-users";
import { DEFAULT_RESERVATION_POLICY, ReservationBook, type ReservationPolicy } from "./reservations";
import { CREDIT_KINDS, type CreditKind, type CreditResult, type DebitResult, type HoldResult, type Ledger, type LedgerEntry, type LedgerEntryKind } from "./types";

export interface LedgerOptions {
  /** reservations of an instance that stopped beating (crashed) are released after this long */
  holdTtlSeconds: number;
  /** how often settled charges are written and idle reservations given back; 0: only on flush() (tests) */
  flushIntervalMs?: number;
  /** how often this instance beats and looks for dead instances; 0: only on releaseExpiredHolds() (tests) */
  heartbeatIntervalMs?: number;
  reservation?: Partial<ReservationPolicy>;
  /** told how long each flush that had charges to write took (monitoring) */
  onFlush?: (seconds: number) => void;
  /** told of the entries each insert appended to a user's chain, in order (UsageRepository.entriesWritten); must not throw */
  onAppended?: (docs: readonly LedgerDoc[]) => void;
}

/**
 * A balance read waits for reservation entries in transit and reads again; after this many reads that overlapped
 * one, it reads with top-ups and releases of the user held back.
 */
const BALANCE_READ_ATTEMPTS = 3;

/**
 * A refused hold waits up to this many times, a flush interval apart, for another instance to give back credits it
 * reserved of the user: one that took all a user had gives the unused rest back at its next flush, any other once
 * the user is idle for a second.
 */
const RESERVED_ELSEWHERE_WAITS = 7;

/** How far back in a user's chain a reservation of another instance is looked for. */
const RESERVED_ELSEWHERE_ENTRIES = 10;

type DebitOptions = Parameters<Ledger["debit"]>[2];

/** The sum of the numbers these promises resolve to, counting those resolved within `ms`. */
async function sumWithin(values: Array<Promise<number>>, ms: number): Promise<number> {
  let sum = 0;
  let timer: NodeJS.Timeout | undefined;
  const counted = Promise.all(values.map(async (value) => {
    const n = await value;
    sum += n;
  }));
  await Promise.race([counted, new Promise<void>((resolve) => { timer = setTimeout(resolve, ms).unref(); })]);
  clearTimeout(timer);
  return sum;
}

/**
 * A walk for idempotency keys reads the credit entries a page at a time, this many first (what is asked for is mostly
 * recent: a refund of a recent payment), twice as many on each next page up to the last.
 */
const KEY_WALK_FIRST_PAGE = 16;
const KEY_WALK_LAST_PAGE = 512;

/**
 * The user's credit entries under `keys` (see Ledger.creditEntriesByKeys): pages of the credit entries, newest first,
 * read by `_id` along the chain's credit links, until every key is found, the chain ends or the walk passes `afterSeq`.
 */
async function creditEntriesByKeys(repo: LedgerRepository, userId: string, keys: string[], afterSeq: number): Promise<LedgerDoc[]> {
  const wanted = new Set(keys);
  const found: LedgerDoc[] = [];
  let beforeSeq: number | undefined;
  for (let limit = KEY_WALK_FIRST_PAGE; wanted.size > 0; limit = Math.min(limit * 2, KEY_WALK_LAST_PAGE)) {
    const page = await repo.entries(userId, { kinds: [...CREDIT_KINDS], limit, beforeSeq });
    for (const doc of page) {
      if (doc.seq <= afterSeq) return found;
      if (wanted.delete(doc.idempotencyKey)) found.push(doc);
    }
    const last = page[page.length - 1];
    if (!last || page.length < limit) return found;
    beforeSeq = last.seq;
  }
  return found;
}

function assertAmount(amount: number, what: string): void {
  if (!Number.isSafeInteger(amount)) throw new TypeError(`${what} must be an integer number of micro-dollars`);
}

/**
 * The credit ledger. Stored entries are append-only per-user chains (see ChainWriter); on top of them each instance
 * keeps credit reservations so that a request's hold and settle cost no database round trip (see ReservationBook).
 * The stored balance never goes below zero because every reservation is a covered `hold` entry, whatever the number
 * of instances; charges are written within `flushIntervalMs`, unused credits go back when a user is idle.
 */
export async function createLedger(db: Database, clock: Clock, options: LedgerOptions): Promise<Ledger> {
  const repo = new LedgerRepository(db);
  await repo.ensureIndexes();
  const checkpoints = new Checkpoints(db, repo.reader);
  const writer = new ChainWriter(repo, clock, options.onAppended);
  const audit = new ChainAudit(db, repo, checkpoints, writer, clock);
  const policy = { ...DEFAULT_RESERVATION_POLICY, ...options.reservation };
  let instanceId = newId("inst", 16);
  const chargeListeners = new Set<(userId: string) => void>();
  const chargesWritten = (userId: string): void => {
    for (const listener of chargeListeners) listener(userId);
  };
  const newBook = (): ReservationBook => {
    const reservedUsers = new ReservedUsers(db, clock, instanceId);
    return new ReservationBook(writer, clock, instanceId, policy, chargesWritten, (userId) => reservedUsers.record(userId));
  };
  let book = newBook();
  await repo.registerInstance(instanceId, new Date(clock.now()));
  // Reservations outlive a crashed instance by at most this long (never longer than the hold TTL).
  const deadAfterMs = Math.min(options.holdTtlSeconds, 120) * 1000;
  // A refused hold looks again once another instance's flush may have given credits back.
  const retryIntervalMs = options.flushIntervalMs || 200;
  const foreignChecks = new Map<string, Promise<"held" | "returned" | "none">>();
  /** false once closed */
  let alive = true;
  /** false between a new identity and its registration: no credits are reserved under an id no sweeper knows */
  let registered = true;
  /** when this instance last confirmed it is still registered (its reservations not swept) */
  let lastBeatAt = clock.now();

  /**
   * One registration and one beat at a time: a request's hold that found the instance unregistered while a beat was
   * registering its new identity inserted the same id a second time (a duplicate key: a 500), and two beats that both
   * found the instance declared dead each took a new identity, the first one's reservations dropped with it.
   */
  let registering: Promise<void> | undefined;
  function register(): Promise<void> {
    registering ??= (async () => {
      const at = clock.now();
      await repo.registerInstance(instanceId, new Date(at));
      registered = true;
      lastBeatAt = at;
    })().finally(() => { registering = undefined; });
    return registering;
  }

  let beating: Promise<void> | undefined;
  function beat(): Promise<void> {
    beating ??= beatOnce().finally(() => { beating = undefined; });
    return beating;
  }

  async function beatOnce(): Promise<void> {
    if (!alive) return;
    if (!registered) return register();
    const at = clock.now();
    if (await repo.beat(instanceId, new Date(at))) {
      lastBeatAt = at;
      return;
    }
    // Declared dead while stalled: another instance already released our reservations. They are forgotten, and the
    // instance carries on under a new identity, so that a later crash of it is swept again (a sweep is keyed to the
    // identity it releases and never runs twice for one). Holds still in flight on the old book then charge nothing.
    book.abandon();
    instanceId = newId("inst", 16);
    book = newBook();
    registered = false;
    await register();
  }

  /** long enough without a beat that another instance may have declared this one dead */
  const silent = (): boolean => alive && clock.now() - lastBeatAt >= deadAfterMs / 2;

  /**
   * After a silence long enough that another instance may have swept this one's reservations (a stall, or the
   * database out of reach while requests were served from memory), a release would give the same credits back a
   * second time: confirm first that this instance is still registered. A beat that finds it declared dead drops the
   * reservations instead; one that fails leaves everything queued for the next round.
   */
  async function flushBook(force: boolean): Promise<void> {
    await timedFlush(book.hasQueued(), async () => {
      if (silent()) await beat();
      await book.flush(force);
    });
  }

  /** Runs a flush, timed for `options.onFlush` when it has charges to write. */
  async function timedFlush(queued: boolean, flush: () => Promise<void>): Promise<void> {
    const startedAt = options.onFlush && queued ? performance.now() : undefined;
    await flush();
    if (startedAt !== undefined) options.onFlush?.((performance.now() - startedAt) / 1000);
  }

  /**
   * The same check before credits are reserved, or given back outside a flush (a credit or a debit gives back first):
   * a top-up written under an identity already swept would never be swept again (the sweep of an identity runs once),
   * and the beat that then finds it declared dead drops it, so those credits would stay held for good; a give-back
   * would return what the sweep returned. One beat at a time; one that fails leaves the write to try as before.
   * Callers check `silent()` first, so that a hold (on every request) awaits nothing while the beats are recent.
   */
  function beatAfterSilence(): Promise<void> {
    return beat().catch(() => undefined);
  }

  async function sweepDeadInstances(): Promise<number> {
    let released = 0;
    for (const dead of await repo.deadInstances(new Date(clock.now() - deadAfterMs))) {
      const deadId = dead._id;
      if (deadId === instanceId) continue;
      const reservationId = `rsv:${deadId}`;
      const outstanding = new Map<string, number>();
      // read by `_id` in the chains of the users it reserved for; an older version's instance lists none: the query
      const entries = dead.listsUsers
        ? (await Promise.all((await ReservedUsers.of(db, deadId)).map((u) => repo.reservationEntriesOf(u.userId, reservationId, u.at)))).flat()
        : await repo.reservationEntries(reservationId);
      for (const doc of entries) {
        // hold: -reserved; release: +given back; settle: amount 0, `cost` drawn from the reservation
        const change = doc.kind === "settle" ? doc.cost ?? 0 : doc.amount;
        outstanding.set(doc.userId, (outstanding.get(doc.userId) ?? 0) - change);
      }
      for (const [userId, amount] of outstanding) {
        if (amount <= 0) continue;
        const outcome = await writer.append(userId, {
          kind: "release", amount, idempotencyKey: `${reservationId}:${userId}:swept`, requireCover: false,
          reservationId, meta: { reason: "instance stopped" },
        });
        if (outcome.status === "applied") released += 1;
      }
      await repo.forgetInstance(deadId);
    }
    return released;
  }

  /**
   * What the newest entries of the user's chain say of other instances' reservations: `held` when one reserved
   * credits and has not given them back (a `hold` not followed by a `release` of the same reservation, a sweep's
   * included), `returned` when all such gave them back, `none` when no other instance reserved lately.
   */
  function reservedElsewhere(userId: string): Promise<"held" | "returned" | "none"> {
    // one read at a time per user: a burst of refused requests shares it
    let check = foreignChecks.get(userId);
    if (!check) {
      check = readReservedElsewhere(userId).finally(() => foreignChecks.delete(userId));
      foreignChecks.set(userId, check);
    }
    return check;
  }

  async function readReservedElsewhere(userId: string): Promise<"held" | "returned" | "none"> {
    const givenBack = new Set<string>();
    for (const doc of await repo.entries(userId, { limit: RESERVED_ELSEWHERE_ENTRIES })) {
      if (!doc.reservationId || doc.reservationId === book.reservationId) continue;
      if (doc.kind === "release") givenBack.add(doc.reservationId);
      else if (doc.kind === "hold" && !givenBack.has(doc.reservationId)) return "held";
    }
    return givenBack.size > 0 ? "returned" : "none";
  }

  /** Best effort: a top-up that fails leaves the hold as it was (the settle then records what it could not charge). */
  const coverShortfall = async (userId: string, holdId: string, cost: number): Promise<void> => {
    if (silent()) await beatAfterSilence();
    await book.cover(userId, holdId, cost).catch(() => undefined);
  };

  /** Takes `amount` back as far as the balance goes, unused credits reserved here given back first (`Ledger.debit`). */
  async function takeBack(userId: string, amount: number, opts: DebitOptions): Promise<DebitResult> {
    if (silent()) await beatAfterSilence();
    const outcome = await book.giveBackFor(userId, () => writer.append(userId, {
      kind: opts.kind, amount: -amount, idempotencyKey: opts.idempotencyKey, requireCover: false, upToBalance: true, meta: opts.meta,
    }));
    const balance = outcome.balance + book.unused(userId);
    if (outcome.status !== "applied") return { applied: false, balance, taken: 0, shortfall: 0 };
    return { applied: true, balance, taken: -outcome.amount, shortfall: amount + outcome.amount };
  }

  /** Refunds waiting for the requests that held what they take back (see `collectAfterHolds`); awaited at close. */
  const collections = new Set<Promise<void>>();

  /**
   * A refund that found part of what it takes back held by requests running on this instance takes, once they
   * close, what they give back (each hold less what it charged), up to its shortfall, as a second refund entry
   * (`<key>:after-holds`): refunded credits that a failed or cheaper request did not use must not stay spendable.
   * What those requests charged was spent before the refund could take it, like credits spent earlier. Holds on
   * other instances are not waited for; a hold still open after the hold TTL gives nothing.
   */
  function collectAfterHolds(userId: string, shortfall: number, opts: DebitOptions): void {
    const closes = book.watchInFlight(userId);
    if (closes.length === 0) return;
    const run = (async () => {
      const returned = await sumWithin(closes, options.holdTtlSeconds * 1000);
      const collect = Math.min(shortfall, returned);
      if (collect <= 0) return;
      await takeBack(userId, collect, { kind: opts.kind, idempotencyKey: `${opts.idempotencyKey}:after-holds`, meta: { ...opts.meta, afterHolds: true } });
    })().catch(() => undefined).finally(() => collections.delete(run));
    collections.add(run);
  }

  const ledger: Ledger = {
    async balance(userId) {
      // The stored balance and this instance's reservation must be read at one point of the chain: a top-up or
      // release landing during the read would count twice or not at all (a balance that jumps up while only
      // charges happen). Read again until none was in transit around the read.
      const stored = async () => (await writer.head(userId)).balance;
      for (let attempt = 0; attempt < BALANCE_READ_ATTEMPTS; attempt++) {
        const balance = await book.exactBalance(userId, stored);
        if (balance !== undefined) return balance;
      }
      return book.exclusiveBalance(userId, stored);
    },

    async credit(userId, amount, opts: { kind: CreditKind; idempotencyKey: string; meta?: Record<string, unknown> }): Promise<CreditResult> {
      assertAmount(amount, "credit amount");
      // Credits reserved here and not in use go back first, so that the entry's balanceAfter (the history's
      // `balance_after`) is the balance the user sees, and a negative adjustment can take them. A give-back that fails
      // stays queued for the next flush: the credit is written all the same.
      if (book.unused(userId) > 0 && silent()) await beatAfterSilence();
      if (book.unused(userId) > 0) await book.giveBack(userId).catch(() => undefined);
      const outcome = await writer.append(userId, {
        kind: opts.kind,
        amount,
        idempotencyKey: opts.idempotencyKey,
        // a negative adjustment may not take the balance below zero
        requireCover: amount < 0,
        meta: opts.meta,
      });
      if (outcome.status === "refused") throw new RangeError("ledger: adjustment would make the balance negative");
      return { applied: outcome.status === "applied", balance: outcome.balance + book.unused(userId) };
    },

    async debit(userId, amount, opts): Promise<DebitResult> {
      assertAmount(amount, "debit amount");
      if (amount <= 0) throw new RangeError("ledger: debit amount must be > 0");
      const result = await takeBack(userId, amount, opts);
      if (result.applied && result.shortfall > 0 && opts.kind === "refund") collectAfterHolds(userId, result.shortfall, opts);
      return result;
    },

    async creditEntriesByKeys(userId, keys, opts) {
      return (await creditEntriesByKeys(repo, userId, keys, opts?.afterSeq ?? 0)).map(toEntry);
    },

    async entriesByKeys(keys) {
      return (await repo.findByIdempotencyKeys(keys)).map(toEntry);
    },

    async hold(userId, amount, opts): Promise<HoldResult> {
      assertAmount(amount, "hold amount");
      if (amount < 0) throw new RangeError("ledger: hold amount must be >= 0");
      if (!registered) await register();
      if (silent()) await beatAfterSilence();
      let held = await book.hold(userId, opts.holdId, amount);
      // Credits another instance holds for this user are not lost to this request: a user with less than a
      // reservation chunk whose requests alternate between instances would otherwise be refused every other time.
      for (let wait = 0; !held.ok && wait < RESERVED_ELSEWHERE_WAITS; wait++) {
        const elsewhere = await reservedElsewhere(userId);
        if (elsewhere === "none") break;
        if (elsewhere === "held") await new Promise((resolve) => setTimeout(resolve, retryIntervalMs));
        // given back, perhaps after the refused top-up read the balance: once more, on a balance that includes it
        held = await book.hold(userId, opts.holdId, amount);
        if (elsewhere === "returned") break;
      }
      if (held.ok) return { ok: true, balance: book.unused(userId) };
      // The figure of the moment of refusal: read later, holds settling meanwhile could show more than `amount`.
      return { ok: false, balance: held.balance ?? (await ledger.balance(userId)) };
    },

    async settle(userId, holdId, cost, meta) {
      assertAmount(cost, "cost");
      if (book.chargeable(userId, holdId, cost) < cost) await coverShortfall(userId, holdId, cost);
      return book.close(userId, holdId, cost, meta);
    },

    async cover(userId, holdId, cost) {
      assertAmount(cost, "cost");
      // Awaited only when a top-up is needed: a caller that quoted `chargeable` then settles with nothing awaited in
      // between is charged what it quoted.
      if (book.chargeable(userId, holdId, cost) < cost) await coverShortfall(userId, holdId, cost);
    },

    chargeable: (userId, holdId, cost) => book.chargeable(userId, holdId, cost),

    async release(userId, holdId) {
      book.close(userId, holdId, 0);
    },

    async entries(userId, opts = {}): Promise<LedgerEntry[]> {
      const docs = await repo.entries(userId, { limit: Math.min(opts.limit ?? 50, 500), beforeSeq: opts.beforeSeq, kinds: opts.kinds as LedgerEntryKind[] | undefined });
      return docs.map(toEntry);
    },

    async releaseExpiredHolds() {
      await beat();
      return sweepDeadInstances();
    },

    flush: () => flushBook(true),

    flushCharges: (userId) => timedFlush(book.hasQueued(userId), () => book.flushCharges(userId)),

    stats: () => book.stats(),

    onChargesWritten(listener) {
      chargeListeners.add(listener);
      return () => { chargeListeners.delete(listener); };
    },

    repairGaps: (userId, opts) => audit.repairGaps({ userId, full: opts?.full }),

    verify: (userId, opts) => audit.verify({ userId, full: opts?.full }),

    async close() {
      for (const timer of timers) clearInterval(timer);
      try {
        await flushBook(true);
        // refunds waiting for holds still open take what closed holds gave back; the open ones give nothing here
        book.stopWatching();
        await Promise.allSettled([...collections]);
        // With requests still in flight the reservation stays, and the sweeper of another instance releases it.
        if (alive && book.isEmpty()) await repo.forgetInstance(instanceId);
      } catch {
        // Database already gone: what was not written stays reserved and is released by the sweeper.
      }
      alive = false;
    },
  };

  const timers: NodeJS.Timeout[] = [];
  const every = (ms: number, fn: () => Promise<unknown>) => {
    if (ms <= 0) return;
    const timer = setInterval(() => { fn().catch(() => undefined); }, ms);
    timer.unref();
    timers.push(timer);
  };
  every(options.flushIntervalMs ?? 200, () => flushBook(false));
  every(options.heartbeatIntervalMs ?? 5_000, () => ledger.releaseExpiredHolds());
  return ledger;
}
