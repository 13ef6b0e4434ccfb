import type { Clock } from "@gw/shared";
import type { ChainWriter, Movement, MovementOutcome } from "./chain-writer";
import type { LedgerStats } from "./types";

/**
 * What one gateway instance has reserved of one user's credits. Money leaves the stored balance when it is reserved
 * (a `hold` entry); requests then draw from the reservation in memory; each request's charge is written later as a
 * `settle` entry of amount 0 (the reservation already took the money) and unused credits go back as a `release`.
 */
interface UserReservation {
  /** reserved by acknowledged ledger entries (holds landed, minus releases and charges landed) */
  reserved: number;
  /** being given back by a release entry not acknowledged yet: no longer free, still in `reserved` */
  releasing: number;
  /** reservation entries (top-up holds, releases) written but not acknowledged: their effect on the stored balance is unknown */
  inTransit: number;
  /** bumped when such an entry starts, lands and is counted (see `exactBalance`) */
  version: number;
  /** releases started: a top-up refused while one was on its way may have read the stored balance before it landed */
  releases: number;
  /** the writes of those entries */
  transit: Set<Promise<unknown>>;
  /** balance reads under way (see `exactBalance`): the state is not forgotten meanwhile */
  readers: number;
  /** an exclusive balance read under way: no top-up or release starts until it is done */
  reading?: Promise<unknown>;
  /** a debit under way (see `giveBackFor`): no top-up starts until its entry is written */
  debiting?: Promise<unknown>;
  inFlight: Map<string, number>;
  inFlightTotal: number;
  /** settled charges not yet written */
  pending: Array<{ holdId: string; cost: number; meta?: Record<string, unknown> }>;
  pendingTotal: number;
  lastActivity: number;
  /** one top-up at a time per user */
  topUp?: Promise<TopUpOutcome>;
  /**
   * Top-ups and releases whose write failed without an answer (a timeout, a dropped connection): they may have
   * landed. Until a retry with the same idempotency key says, neither counts as spendable here (an unknown release
   * stays in `releasing`, an unknown top-up is not in `reserved`), so an unknown outcome can make credits look
   * scarcer for a while, never spend or give back the same credits twice.
   */
  inDoubt: Movement[];
  /** the flush writing this user's entries right now, if any */
  flushing?: Promise<void>;
  /**
   * The last top-up took what the balance had (less than a whole chunk, or a whole chunk that left less stored than
   * the request it was for): the rest of the user's credits is all here,
   * and another instance serving the same user would refuse its requests while this one keeps it. Unused credits then
   * go back at every flush, not only once the user is idle.
   */
  scarce: boolean;
  /** a top-up ahead of need found less than a whole chunk: none is tried again until a top-up takes a whole one */
  aheadRefused: boolean;
}

export interface ReservationPolicy {
  /** a top-up reserves this many times what the request needs (more requests then run without a write) */
  chunkMultiplier: number;
  /** and at least this much (micro-dollars), or what the balance has when that is less */
  minChunk: number;
  /** but never more than this per top-up (micro-dollars) */
  maxChunk: number;
  /** unused credits go back after this long without a request */
  idleMs: number;
}

export const DEFAULT_RESERVATION_POLICY: ReservationPolicy = { chunkMultiplier: 20, minChunk: 1_000_000, maxChunk: 5_000_000, idleMs: 1_000 };

/** Top-ups tried again for one hold when a refused one left enough in sight (see `hold`). */
const MAX_TOP_UP_RETRIES = 3;

/**
 * A top-up's answer; refused for want of credits: `stored`, the balance it saw, and `stale` when this instance started
 * giving unused credits back meanwhile, which that figure may miss.
 */
type TopUpOutcome = { ok: boolean; stored?: number; stale?: boolean };

const available = (r: UserReservation) => r.reserved - r.releasing - r.inFlightTotal - r.pendingTotal;

export class ReservationBook {
  private readonly users = new Map<string, UserReservation>();
  /** holds whose close someone waits for (see `watchInFlight`): hold id -> told what the close gave back */
  private readonly closeWatchers = new Map<string, (returned: number) => void>();
  /** idempotency keys of this instance's reserve/release movements; never reset, so a key is never reused */
  private counter = 0;
  readonly reservationId: string;

  constructor(
    private readonly writer: ChainWriter,
    private readonly clock: Clock,
    private readonly instanceId: string,
    private readonly policy: ReservationPolicy,
    /** told, after a flush, of each user whose charges it wrote (balance alerts watch it, off the request path) */
    private readonly onChargesWritten?: (userId: string) => void,
    /** awaited before a reservation for a user: the instance records whom it reserved for (reserved-users.ts) */
    private readonly beforeReserve?: (userId: string) => Promise<void>,
  ) {
    this.reservationId = `rsv:${instanceId}`;
  }

  /** credits reserved here and still free for new requests */
  unused(userId: string): number {
    const r = this.users.get(userId);
    return r ? available(r) : 0;
  }

  /**
   * The stored balance (`stored()` reads it) plus what this instance reserved and has not used, taken at one point of
   * the chain; `undefined` when that could not be told, and the caller reads again. A top-up or release entry that
   * is unacknowledged, or starts or lands during the read, may be in the stored figure or not: the read is then
   * refused (one in transit is waited for first). The user's state is kept for the read, even when a flush empties it,
   * so that its version (bumped by every such entry) cannot start again from 0 and repeat a value.
   */
  async exactBalance(userId: string, stored: () => Promise<number>): Promise<number | undefined> {
    const r = this.state(userId);
    r.readers += 1;
    try {
      if (r.transit.size > 0) {
        await Promise.allSettled([...r.transit]);
        return undefined;
      }
      const before = r.version;
      const balance = (await stored()) + available(r);
      return r.inTransit === 0 && r.version === before ? balance : undefined;
    } finally {
      r.readers -= 1;
    }
  }

  /**
   * `exactBalance` that always answers, for a user so busy that reads keep overlapping top-ups and releases: none
   * starts while it runs (requests that need a top-up wait for it; one already started is waited for).
   */
  async exclusiveBalance(userId: string, stored: () => Promise<number>): Promise<number> {
    const r = this.state(userId);
    // counted as a reader from the start, so that the state is not forgotten while this waits its turn
    r.readers += 1;
    let done: (() => void) | undefined;
    try {
      while (r.reading) await r.reading;
      r.reading = new Promise<void>((resolve) => { done = resolve; });
      for (;;) {
        // A top-up that was under way may still write a second, smaller entry (see `reserve`): read until none did.
        while (r.transit.size > 0) await Promise.allSettled([...r.transit]);
        const before = r.version;
        const balance = (await stored()) + available(r);
        if (r.inTransit === 0 && r.version === before) return balance;
      }
    } finally {
      r.readers -= 1;
      if (done) {
        r.reading = undefined;
        done();
      }
    }
  }

  /** settled charges not written yet (they already count against the balance) */
  pendingCharges(userId: string): number {
    return this.users.get(userId)?.pendingTotal ?? 0;
  }

  /**
   * Reserves `amount` for one request; in memory when the reservation covers it, else one ledger write first.
   * Refused: `balance` is what this user could spend at that moment (the stored balance the refused top-up saw plus
   * what the reservation still had), when a top-up said so.
   */
  async hold(userId: string, holdId: string, amount: number): Promise<{ ok: true } | { ok: false; balance?: number }> {
    let retries = 0;
    for (;;) {
      // Looked up again after every wait: a flush forgets the state of a user with nothing reserved, and credits
      // reserved into a forgotten state could never be drawn or given back.
      const r = this.state(userId);
      if (available(r) >= amount) {
        r.inFlight.set(holdId, amount);
        r.inFlightTotal += amount;
        r.lastActivity = this.clock.now();
        this.topUpAhead(userId, r, amount);
        return { ok: true };
      }
      if (r.topUp) {
        // A refused top-up just read the stored balance: a request it cannot cover either is refused with it, not
        // after a top-up of its own (a burst of requests of a user without credits would otherwise take one write
        // each, one after the other).
        const seen = await r.topUp;
        const couldSpend = seen.ok || seen.stored === undefined || seen.stale ? undefined : seen.stored + available(r);
        if (couldSpend !== undefined && couldSpend < amount) return { ok: false, balance: couldSpend };
        continue;
      }
      if (r.reading || r.debiting) {
        await (r.reading ?? r.debiting);
        continue;
      }
      r.topUp = this.reserve(userId, r, amount - available(r), true);
      let outcome: TopUpOutcome;
      try {
        outcome = await r.topUp;
      } finally {
        r.topUp = undefined;
      }
      if (outcome.ok) continue;
      // Charges that settled while the top-up was written may have made room: take it rather than refuse.
      if (available(r) >= amount) continue;
      // Or credits this instance gave back while it was written may have landed after it: read them with another.
      if (outcome.stale && retries++ < MAX_TOP_UP_RETRIES) continue;
      // Or enough that a smaller top-up now covers the rest: what the refused one saw stored (credits given back by
      // this instance's flush, say) plus what settled meanwhile. Bounded: each try is a write.
      const couldSpend = outcome.stored === undefined ? undefined : outcome.stored + available(r);
      if (couldSpend !== undefined && couldSpend >= amount && retries++ < MAX_TOP_UP_RETRIES) continue;
      return { ok: false, balance: outcome.stale ? undefined : couldSpend };
    }
  }

  /**
   * Closes a request's hold charging `cost`; returns what was charged. A cost above the hold (the upstream used more
   * than the worst case the gateway could foresee) is drawn from the rest of this user's reservation, and what even
   * that does not cover is not charged (recorded as `uncharged` in `meta`), so the balance never goes below zero.
   * Unknown or closed holds charge nothing. A charge, or a close with `meta` (the request's usage record) even at
   * cost 0, is written as a `settle` entry.
   */
  close(userId: string, holdId: string, cost: number, meta?: Record<string, unknown>): number {
    const r = this.users.get(userId);
    const amount = r?.inFlight.get(holdId);
    if (!r || amount === undefined) return 0;
    r.inFlight.delete(holdId);
    r.inFlightTotal -= amount;
    r.lastActivity = this.clock.now();
    const wanted = Math.max(0, cost);
    const charged = Math.min(wanted, available(r));
    this.tellClosed(holdId, Math.max(0, amount - charged));
    if (charged < wanted && meta !== undefined) meta = { ...meta, uncharged: wanted - charged };
    if (charged > 0 || meta !== undefined) {
      r.pending.push({ holdId, cost: charged, meta });
      r.pendingTotal += charged;
    }
    return charged;
  }

  /**
   * Grows an open hold to `cost` when the upstream used more than the worst case held and the rest of this
   * instance's reservation does not cover the difference: the reservation of a user who looked idle while a slow
   * request ran has been given back meanwhile. The difference is held like a request of its own (a top-up from the
   * stored balance) and added to the hold; when the balance has less, what it has. Refused: the hold stays as it was.
   */
  async cover(userId: string, holdId: string, cost: number): Promise<void> {
    const held = this.users.get(userId)?.inFlight.get(holdId);
    if (held === undefined || cost <= held + this.unused(userId)) return;
    const extraId = `${holdId}:cover`;
    const wanted = cost - held;
    let outcome = await this.hold(userId, extraId, wanted);
    if (!outcome.ok && outcome.balance !== undefined && outcome.balance > 0 && outcome.balance < wanted) {
      outcome = await this.hold(userId, extraId, outcome.balance);
    }
    if (!outcome.ok) return;
    // The user has a hold in flight, so its state was not forgotten meanwhile.
    const r = this.users.get(userId);
    const extra = r?.inFlight.get(extraId);
    if (!r || extra === undefined) return;
    r.inFlight.delete(extraId);
    const current = r.inFlight.get(holdId);
    if (current === undefined) r.inFlightTotal -= extra; // closed meanwhile: the extra goes back to the reservation
    else r.inFlight.set(holdId, current + extra);
  }

  /** What `close(userId, holdId, cost)` would charge now (0 for an unknown or closed hold). */
  chargeable(userId: string, holdId: string, cost: number): number {
    const r = this.users.get(userId);
    const amount = r?.inFlight.get(holdId);
    if (!r || amount === undefined) return 0;
    return Math.min(Math.max(0, cost), available(r) + amount);
  }

  /**
   * Writes pending charges and gives back unused credits of idle users (all users with `force`). One ordered
   * batch per user; what fails stays queued for the next round.
   */
  async flush(force = false): Promise<void> {
    // Forced (shutdown, tests): a top-up on its way would land after this flush gave the unused credits back.
    if (force) await Promise.all([...this.users.values()].map((r) => r.topUp?.catch(() => undefined)));
    const now = this.clock.now();
    await Promise.all([...this.users.entries()].map(async ([userId, r]) => {
      // A user's flushes run one at a time. A background one skips a user whose last flush is still writing; a forced
      // one waits for it, since the charges that flush took are not stored until it is done.
      if (r.flushing) {
        if (!force) return;
        await r.flushing.catch(() => undefined);
      }
      await this.flushUser(userId, r, force || r.scarce || now - r.lastActivity >= this.policy.idleMs);
    }));
  }

  /**
   * Writes one user's pending charges now (read-your-writes for usage queries); reservations stay. Charges that a
   * background flush took are waited for too: they left `pending` before they were stored.
   */
  async flushCharges(userId: string): Promise<void> {
    const r = this.users.get(userId);
    if (!r) return;
    if (r.flushing) await r.flushing;
    if (r.pending.length > 0) await this.flushUser(userId, r, false);
  }

  /**
   * Writes one user's pending charges and gives back the credits reserved here and not in use now, so that the
   * stored balance holds all the user has (a debit that must not take the balance below zero reads it).
   */
  async giveBack(userId: string): Promise<void> {
    const r = this.users.get(userId);
    if (!r) return;
    await r.topUp?.catch(() => undefined);
    await r.flushing?.catch(() => undefined);
    await this.flushUser(userId, r, true);
  }

  /**
   * `giveBack`, then `write` (a debit's entry) before any top-up of this user starts: credits reserved from the stored
   * balance between the give-back and the debit would escape it (a full refund would leave them to spend).
   */
  async giveBackFor<T>(userId: string, write: () => Promise<T>): Promise<T> {
    const r = this.state(userId);
    // counted as a reader, so that the state is not forgotten while top-ups wait on it
    r.readers += 1;
    let done: (() => void) | undefined;
    try {
      while (r.debiting) await r.debiting;
      r.debiting = new Promise<void>((resolve) => { done = resolve; });
      await this.giveBack(userId);
      return await write();
    } finally {
      r.readers -= 1;
      if (done) {
        r.debiting = undefined;
        done();
      }
    }
  }

  /** Are settled charges (of this user, or of anyone) waiting to be written? */
  hasQueued(userId?: string): boolean {
    if (userId !== undefined) return (this.users.get(userId)?.pending.length ?? 0) > 0;
    for (const r of this.users.values()) if (r.pending.length > 0) return true;
    return false;
  }

  /** What this instance holds now, for monitoring; walks every user, so it is read on a scrape, not per request. */
  stats(): LedgerStats {
    const stats: LedgerStats = { queuedEntries: 0, openHolds: 0, reservedMicros: 0 };
    for (const r of this.users.values()) {
      stats.queuedEntries += r.pending.length;
      stats.openHolds += r.inFlight.size;
      stats.reservedMicros += r.reserved;
    }
    return stats;
  }

  /** true when nothing is reserved, in flight or waiting to be written */
  isEmpty(): boolean {
    return this.users.size === 0;
  }

  /**
   * One promise per hold of this user in flight here, told what the hold's close gives back to the reservation (the
   * hold less what it charged); 0 for a hold forgotten or no longer watched (`stopWatching`). A cover's extra hold is
   * part of the hold it grows. For a refund that found what it takes back held by running requests.
   */
  watchInFlight(userId: string): Array<Promise<number>> {
    const holds = [...(this.users.get(userId)?.inFlight.keys() ?? [])].filter((holdId) => !holdId.endsWith(":cover"));
    return holds.map((holdId) => new Promise<number>((resolve) => {
      const earlier = this.closeWatchers.get(holdId);
      this.closeWatchers.set(holdId, earlier ? (returned) => { earlier(returned); resolve(returned); } : resolve);
    }));
  }

  /** Tells every watcher of a hold still open that nothing more will come back (shutdown, or this book abandoned). */
  stopWatching(): void {
    for (const tell of this.closeWatchers.values()) tell(0);
    this.closeWatchers.clear();
  }

  /** Forgets everything (this instance was declared dead: others released its reservations). */
  abandon(): void {
    this.users.clear();
    this.stopWatching();
  }

  private tellClosed(holdId: string, returned: number): void {
    const tell = this.closeWatchers.get(holdId);
    if (!tell) return;
    this.closeWatchers.delete(holdId);
    tell(returned);
  }

  private state(userId: string): UserReservation {
    let r = this.users.get(userId);
    if (!r) {
      r = { reserved: 0, releasing: 0, inTransit: 0, version: 0, releases: 0, transit: new Set(), readers: 0, inFlight: new Map(), inFlightTotal: 0, pending: [], pendingTotal: 0, lastActivity: this.clock.now(), inDoubt: [], scarce: false, aheadRefused: false };
      this.users.set(userId, r);
    }
    return r;
  }

  private key(userId: string): string {
    this.counter += 1;
    return `${this.reservationId}:${userId}:${this.counter}`;
  }

  /** A top-up's size for requests of `need`: one write serves many of them (a cheap chat request needs ~50 micro-dollars). */
  private chunkFor(need: number): number {
    return Math.max(need, Math.min(Math.max(need * this.policy.chunkMultiplier, this.policy.minChunk), this.policy.maxChunk));
  }

  /**
   * Starts the next top-up while the reservation still covers requests, once less than half a chunk is left, so that
   * steady traffic never waits for the write (on a busy database it can take a good part of a second, and every
   * request of the user would queue behind it). A whole chunk or nothing: when the balance has less, the requests
   * that run short take the rest themselves (`hold`), and the reservation never holds more than 1.5 chunks.
   */
  private topUpAhead(userId: string, r: UserReservation, need: number): void {
    if (r.topUp || r.reading || r.debiting || r.scarce || r.aheadRefused || r.inDoubt.length > 0) return;
    const chunk = this.chunkFor(need);
    if (available(r) >= chunk / 2) return;
    const run = this.reserve(userId, r, need, false).then(
      (outcome) => {
        if (!outcome.ok) r.aheadRefused = true;
        return outcome;
      },
      // in doubt (see `inDoubt`): the requests waiting on it try a top-up of their own
      () => ({ ok: false }),
    );
    r.topUp = run;
    void run.finally(() => {
      if (r.topUp === run) r.topUp = undefined;
    });
  }

  /** One top-up of a chunk; with `partial`, when the balance has less, what there is if that covers `need`. */
  private async reserve(userId: string, r: UserReservation, need: number, partial: boolean): Promise<TopUpOutcome> {
    // A top-up blocks this user's new requests on one write: make it rare.
    const chunk = this.chunkFor(need);
    const releases = r.releases;
    let amount = chunk;
    await this.beforeReserve?.(userId);
    for (let attempt = 0; attempt < 3; attempt++) {
      const movement = this.movement(userId, "hold", -amount, true);
      const outcome = await this.inTransit(r, this.writer.append(userId, movement)).catch((err: unknown) => {
        r.inDoubt.push(movement);
        throw err;
      });
      if (outcome.status === "applied") {
        r.reserved += amount;
        // a balance read that saw the entry land but not this (a microtask apart) must not count as consistent
        r.version += 1;
        // Scarce also when a whole chunk took (nearly) all there was: what is left stored would not serve this
        // request on another instance either.
        r.scarce = amount < chunk || outcome.balance < need;
        if (!r.scarce) r.aheadRefused = false;
        return { ok: true };
      }
      // Not enough for a whole chunk: take what there is, if it covers this request.
      if (outcome.status !== "refused" || !partial) return { ok: false };
      if (outcome.balance < need) return { ok: false, stored: outcome.balance, stale: r.releases !== releases };
      amount = outcome.balance;
    }
    return { ok: false };
  }

  private movement(userId: string, kind: "hold" | "release", amount: number, requireCover: boolean): Movement {
    return { kind, amount, idempotencyKey: this.key(userId), requireCover, reservationId: this.reservationId };
  }

  private flushUser(userId: string, r: UserReservation, releaseUnused: boolean): Promise<void> {
    const run = this.writeUser(userId, r, releaseUnused).finally(() => {
      if (r.flushing === run) r.flushing = undefined;
    });
    r.flushing = run;
    return run;
  }

  private async writeUser(userId: string, r: UserReservation, releaseUnused: boolean): Promise<void> {
    // No top-up or release starts during an exclusive balance read: those wait for the next flush.
    if (!r.reading) await this.resolveInDoubt(userId, r);
    const charges = r.pending.splice(0);
    let charged = false;
    const writes: Array<Promise<unknown>> = charges.map(async (charge) => {
      try {
        await this.writer.append(userId, {
          kind: "settle", amount: 0, cost: charge.cost, idempotencyKey: `close:${charge.holdId}`, requireCover: false,
          holdId: charge.holdId, reservationId: this.reservationId, meta: charge.meta,
        });
        r.pendingTotal -= charge.cost;
        r.reserved -= charge.cost;
        if (charge.cost > 0) charged = true;
      } catch (err) {
        r.pending.push(charge);
        throw err;
      }
    });
    // Queued right behind the charges, so the release lands in the same ordered batch.
    // The charges being written still count in both `reserved` and `pendingTotal`, so this is exactly what is free.
    const unused = releaseUnused && !r.reading ? available(r) : 0;
    if (unused > 0) {
      r.releasing += unused;
      r.releases += 1;
      const movement = this.movement(userId, "release", unused, false);
      writes.push(this.inTransit(r, this.writer.append(userId, movement))
        .then(
          () => { r.reserved -= unused; r.releasing -= unused; r.version += 1; },
          (err: unknown) => { r.inDoubt.push(movement); throw err; },
        ));
    }
    await Promise.allSettled(writes);
    if (charged) this.onChargesWritten?.(userId);
    if (this.users.get(userId) === r && r.reserved === 0 && r.inFlightTotal === 0 && r.pending.length === 0 && !r.topUp && r.inTransit === 0 && r.inDoubt.length === 0 && r.readers === 0) this.users.delete(userId);
  }

  /**
   * Writes the movements of unknown outcome again with their own keys: the ledger answers `duplicate` for one that
   * had landed, `applied` for one that had not (it is now), `refused` for a top-up the balance no longer covers.
   * Either way it then counts exactly once. One that fails again stays in doubt.
   */
  private async resolveInDoubt(userId: string, r: UserReservation): Promise<void> {
    for (const movement of r.inDoubt.splice(0)) {
      let outcome: MovementOutcome;
      try {
        outcome = await this.inTransit(r, this.writer.append(userId, movement));
      } catch {
        r.inDoubt.push(movement);
        continue;
      }
      if (outcome.status === "refused") continue;
      // a top-up is a negative `hold` (money into the reservation), a release a positive one (money back)
      if (movement.kind === "hold") r.reserved -= movement.amount;
      else {
        r.reserved -= movement.amount;
        r.releasing -= movement.amount;
      }
      r.version += 1;
    }
  }

  /** Marks a reservation entry as written but unacknowledged until `write` settles. */
  private async inTransit<T>(r: UserReservation, write: Promise<T>): Promise<T> {
    r.inTransit += 1;
    r.version += 1;
    r.transit.add(write);
    try {
      return await write;
    } finally {
      r.transit.delete(write);
      r.inTransit -= 1;
      r.version += 1;
    }
  }
}
