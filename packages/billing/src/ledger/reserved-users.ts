import type { Collection } from "mongodb";
import { isDuplicateKey, type Database } from "@gw/db";
import type { Clock } from "@gw/shared";

/** One user an instance reserved credits for: `_id` = `<instance>:<n>`, n = 1, 2, ... in the order it met them. */
interface ReservedUserDoc {
  _id: string;
  userId: string;
  /** written before the instance's first reservation for the user (the instance's clock, as its entries) */
  at: Date;
}

export const RESERVED_USERS_COLLECTION = "ledger_reserved_users";

/** Empty positions a reading goes past: a record whose insert failed leaves one until another record takes it. */
const EMPTY_POSITIONS_READ_PAST = 64;

const recordId = (instanceId: string, n: number): string => `${instanceId}:${n.toString().padStart(9, "0")}`;

/**
 * The users each instance reserved credits for, so that the instance that sweeps a stopped one's reservations reads
 * their chains by `_id` (ChainReader) instead of querying the whole ledger for the reservation's entries (which the
 * embedded FerretDB answers by reading every entry of every user). Insert-only: one document per user and instance.
 */
export class ReservedUsers {
  private readonly collection: Collection<ReservedUserDoc>;
  private next = 1;
  /** positions whose insert failed, taken again first */
  private readonly free: number[] = [];
  private readonly recorded = new Map<string, Promise<void>>();

  constructor(db: Database, private readonly clock: Clock, private readonly instanceId: string) {
    this.collection = db.connection.collection<ReservedUserDoc>(RESERVED_USERS_COLLECTION);
  }

  /** Before this instance's first reservation for `userId` (once; a failure is tried again by the next reservation). */
  record(userId: string): Promise<void> {
    let done = this.recorded.get(userId);
    if (!done) {
      done = this.insert(userId).catch((err: unknown) => {
        this.recorded.delete(userId);
        throw err;
      });
      this.recorded.set(userId, done);
    }
    return done;
  }

  private async insert(userId: string): Promise<void> {
    for (;;) {
      const n = this.free.shift() ?? this.next++;
      try {
        await this.collection.insertOne({ _id: recordId(this.instanceId, n), userId, at: new Date(this.clock.now()) });
        return;
      } catch (err) {
        // taken by an earlier insert whose answer was lost: the next position
        if (isDuplicateKey(err)) continue;
        this.free.push(n);
        throw err;
      }
    }
  }

  /** What an instance recorded, read by `_id` from its first position on. */
  static async of(db: Database, instanceId: string): Promise<ReservedUserDoc[]> {
    const collection = db.connection.collection<ReservedUserDoc>(RESERVED_USERS_COLLECTION);
    const found: ReservedUserDoc[] = [];
    for (let n = 1, empty = 0; empty < EMPTY_POSITIONS_READ_PAST; n++) {
      const doc = await collection.findOne({ _id: recordId(instanceId, n) });
      if (doc) found.push(doc);
      empty = doc ? 0 : empty + 1;
    }
    return found;
  }
}
