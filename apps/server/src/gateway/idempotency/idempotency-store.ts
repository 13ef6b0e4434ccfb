import type { Database } from "@gw/db";
import { Schema, type Model } from "mongoose";

interface IdempotencyDoc {
  _id: string;
  state: "pending" | "done";
  fingerprint: string;
  status?: number;
  /** the JSON answer, serialized (keeps any key names safe for the database) */
  body?: string;
  headers?: Record<string, string>;
  createdAt: Date;
}

const schema = new Schema<IdempotencyDoc>({
  _id: { type: String, required: true },
  state: { type: String, required: true },
  fingerprint: { type: String, required: true },
  status: { type: Number },
  body: { type: String },
  headers: { type: Schema.Types.Mixed },
  createdAt: { type: Date, required: true },
}, { versionKey: false, collection: "gateway_idempotency" });

export interface StoredAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export type BeginResult =
  | { kind: "acquired" }
  | { kind: "replay"; answer: StoredAnswer }
  | { kind: "in_flight" }
  | { kind: "mismatch" };

const isDuplicateKey = (err: unknown) => (err as { code?: number }).code === 11000;

/**
 * Once-only answers per (user, Idempotency-Key). The insert of the `_id` is the lock: FerretDB applies unique
 * inserts atomically where conditional updates race (see the database note in the team brief).
 */
export class IdempotencyStore {
  private readonly model: Model<IdempotencyDoc>;

  constructor(db: Database, private readonly opts: { ttlMs: number; pendingTtlMs: number; now: () => number }) {
    this.model = (db.connection.models.GatewayIdempotency as Model<IdempotencyDoc> | undefined) ?? db.connection.model<IdempotencyDoc>("GatewayIdempotency", schema);
  }

  async begin(id: string, fingerprint: string): Promise<BeginResult> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.model.create({ _id: id, state: "pending", fingerprint, createdAt: new Date(this.opts.now()) });
        return { kind: "acquired" };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const doc = await this.model.findById(id).lean<IdempotencyDoc>();
      if (!doc) continue; // deleted between our insert and read: try once more
      const age = this.opts.now() - doc.createdAt.getTime();
      const expired = doc.state === "done" ? age > this.opts.ttlMs : age > this.opts.pendingTtlMs;
      if (expired) {
        // Only the exact stale record is removed; the insert that follows is again the lock.
        await this.model.deleteOne({ _id: id, createdAt: doc.createdAt });
        continue;
      }
      if (doc.fingerprint !== fingerprint) return { kind: "mismatch" };
      if (doc.state === "pending" || doc.status === undefined || doc.body === undefined) return { kind: "in_flight" };
      return { kind: "replay", answer: { status: doc.status, body: JSON.parse(doc.body) as unknown, headers: doc.headers ?? {} } };
    }
    return { kind: "in_flight" };
  }

  async complete(id: string, answer: StoredAnswer): Promise<void> {
    await this.model.updateOne({ _id: id }, { $set: { state: "done", status: answer.status, body: JSON.stringify(answer.body), headers: answer.headers } });
  }

  async abandon(id: string): Promise<void> {
    await this.model.deleteOne({ _id: id, state: "pending" });
  }

  /**
   * Deletes the records that can no longer be replayed (the database may have no TTL index: FerretDB has none), so the
   * collection holds at most a TTL's worth of answers. Returns how many went.
   */
  async sweep(): Promise<number> {
    const now = this.opts.now();
    // the driver's collection: the filter's operators are ours (mongoose's sanitizeFilter would neutralise them)
    const result = await this.model.collection.deleteMany({
      $or: [
        { state: "done", createdAt: { $lt: new Date(now - this.opts.ttlMs) } },
        { state: "pending", createdAt: { $lt: new Date(now - this.opts.pendingTtlMs) } },
      ],
    });
    return result.deletedCount;
  }

  /** Sweeps every `intervalMs` in the background until the returned stop function is called. */
  sweepEvery(intervalMs: number, onError: (err: unknown) => void): () => void {
    const timer = setInterval(() => void this.sweep().catch(onError), intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}

