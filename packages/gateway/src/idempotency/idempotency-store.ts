import { databaseOutage, isDuplicateKey, type Database } from "@gw/db";
import { Schema, type Model } from "mongoose";

interface IdempotencyDoc {
  _id: string;
  state: "pending" | "done";
  fingerprint: string;
  status?: number;
  /** the JSON answer, serialized (keeps any key names safe for the database); its first part when it has more */
  body?: string;
  /** how many more parts of the answer are stored in gateway_idempotency_parts */
  parts?: number;
  headers?: Record<string, string>;
  /** `sse`: the answer was an event stream, `body` its text; `raw`: bytes of a type of their own (audio, text) */
  format?: "sse" | "raw";
  createdAt: Date;
}

const schema = new Schema<IdempotencyDoc>({
  _id: { type: String, required: true },
  state: { type: String, required: true },
  fingerprint: { type: String, required: true },
  status: { type: Number },
  body: { type: String },
  parts: { type: Number },
  headers: { type: Schema.Types.Mixed },
  format: { type: String },
  createdAt: { type: Date, required: true },
}, { versionKey: false, collection: "gateway_idempotency" });

/** Part `n` (1, 2, …) of a large answer; `_id` is `<record id> <n>` (a space never occurs in a record id). */
interface PartDoc {
  _id: string;
  body: string;
  createdAt: Date;
}

const partSchema = new Schema<PartDoc>({
  _id: { type: String, required: true },
  body: { type: String, required: true },
  createdAt: { type: Date, required: true },
}, { versionKey: false, collection: "gateway_idempotency_parts" });

/**
 * A database document holds at most 16 MiB, and an answer can be larger (a long text-to-speech or speech-to-speech
 * result is inline base64, twice). Answers are stored in parts of this many characters: at most 12 MiB of UTF-8 each.
 */
const PART_CHARS = 4 * 1024 * 1024;
const partId = (id: string, n: number): string => `${id} ${n}`;

/** The serialized answer in parts, never splitting a surrogate pair (a lone half would not survive UTF-8). */
function splitParts(text: string): string[] {
  const parts: string[] = [];
  let at = 0;
  do {
    let end = Math.min(text.length, at + PART_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    parts.push(text.slice(at, end));
    at = end;
  } while (at < text.length);
  return parts;
}

export type StoredAnswer =
  | { format: "json"; status: number; body: unknown; headers: Record<string, string> }
  /** a streamed answer: the server-sent events as written, `[DONE]` included */
  | { format: "sse"; status: number; body: string; headers: Record<string, string> }
  /** an answer that is not JSON (audio, a transcript as text): its type and its bytes in base64 */
  | { format: "raw"; status: number; body: RawBody; headers: Record<string, string> };

export interface RawBody {
  contentType: string;
  base64: string;
}

function storedAnswer(format: IdempotencyDoc["format"], answer: { status: number; headers: Record<string, string> }, body: string): StoredAnswer {
  if (format === "sse") return { ...answer, format, body: JSON.parse(body) as string };
  if (format === "raw") return { ...answer, format, body: JSON.parse(body) as RawBody };
  return { ...answer, format: "json", body: JSON.parse(body) as unknown };
}

export type BeginResult =
  | { kind: "acquired" }
  | { kind: "replay"; answer: StoredAnswer }
  | { kind: "in_flight" }
  | { kind: "mismatch" };


/**
 * Once-only answers per (user, Idempotency-Key). The insert of the `_id` is the lock: FerretDB applies unique
 * inserts atomically where conditional updates race (see the database note in the team brief).
 */
export class IdempotencyStore {
  private readonly model: Model<IdempotencyDoc>;
  private readonly parts: Model<PartDoc>;

  constructor(db: Database, private readonly opts: { ttlMs: number; pendingTtlMs: number; now: () => number }) {
    this.model = (db.connection.models.GatewayIdempotency as Model<IdempotencyDoc> | undefined) ?? db.connection.model<IdempotencyDoc>("GatewayIdempotency", schema);
    this.parts = (db.connection.models.GatewayIdempotencyPart as Model<PartDoc> | undefined) ?? db.connection.model<PartDoc>("GatewayIdempotencyPart", partSchema);
  }

  /** The whole serialized answer, or undefined when one of its parts is gone. */
  private async storedBody(id: string, first: string, more: number): Promise<string | undefined> {
    const rest = await Promise.all(Array.from({ length: more }, (_, i) => this.parts.findById(partId(id, i + 1)).lean<PartDoc>()));
    if (rest.some((part) => !part)) return undefined;
    return first + rest.map((part) => part?.body ?? "").join("");
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
      const body = await this.storedBody(id, doc.body, doc.parts ?? 0);
      if (body === undefined) {
        // a part swept or lost: the answer cannot be replayed, so the record goes like an expired one
        await this.model.deleteOne({ _id: id, createdAt: doc.createdAt });
        continue;
      }
      const answer = { status: doc.status, headers: doc.headers ?? {} };
      return { kind: "replay", answer: storedAnswer(doc.format, answer, body) };
    }
    return { kind: "in_flight" };
  }

  /** Stores the answer: its parts beyond the first, then the record (so a record marked done always has all of them). */
  async complete(id: string, answer: StoredAnswer): Promise<void> {
    const chunks = splitParts(JSON.stringify(answer.body));
    const createdAt = new Date(this.opts.now());
    // one at a time: each part is up to 12 MiB of the database's write buffer
    for (let n = 1; n < chunks.length; n++) {
      await this.parts.replaceOne({ _id: partId(id, n) }, { _id: partId(id, n), body: chunks[n], createdAt }, { upsert: true });
    }
    const rest = chunks.length - 1;
    await this.model.updateOne({ _id: id }, {
      $set: {
        state: "done", status: answer.status, body: chunks[0], headers: answer.headers,
        ...(rest > 0 ? { parts: rest } : {}), ...(answer.format === "json" ? {} : { format: answer.format }),
      },
    });
  }

  /**
   * What a request that is still making progress calls (a stream, at each event): its pending record is kept fresh,
   * at most once per quarter of the pending TTL, so that a stream that keeps sending past that TTL (nothing cuts it)
   * is not taken for one a crashed instance left behind, which would let a duplicate run and pay a second time.
   */
  keeper(id: string): () => void {
    let touched = this.opts.now();
    return () => {
      const now = this.opts.now();
      if (now - touched < this.opts.pendingTtlMs / 4) return;
      touched = now;
      // an expired record's removal names its createdAt, so it cannot remove the record once refreshed
      void this.model.updateOne({ _id: id, state: "pending" }, { $set: { createdAt: new Date(now) } }).catch(() => undefined);
    };
  }

  /**
   * Makes a write of a record (`complete`, `abandon`) that failed because the database was out of reach once it is
   * back: tried again every `retryMs` while the record's pending TTL runs. Without it the pending record would stand
   * until that TTL, and every retry with the key would get 409 "still in progress" for a request long answered.
   */
  retryWhenReachable(write: () => Promise<void>, onError: (err: unknown) => void, retryMs = 1_000): void {
    const giveUpAt = this.opts.now() + this.opts.pendingTtlMs;
    const attempt = (): void => {
      write().catch((err: unknown) => {
        if (!databaseOutage(err) || this.opts.now() + retryMs >= giveUpAt) return onError(err);
        setTimeout(attempt, retryMs).unref();
      });
    };
    setTimeout(attempt, retryMs).unref();
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
    // parts are written after their record was created, so they outlive it by at most a request's duration
    const parts = await this.parts.collection.deleteMany({ createdAt: { $lt: new Date(now - this.opts.ttlMs) } });
    return result.deletedCount + parts.deletedCount;
  }

  /**
   * Deletes every answer stored for a user, parts included (account deletion: they hold the user's prompts and
   * outputs). Record ids start with `<user id>:`, part ids with the record's id.
   */
  async forgetUser(userId: string): Promise<number> {
    const ofUser = new RegExp(`^${userId.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:`);
    const records = await this.model.deleteMany({ _id: ofUser });
    const parts = await this.parts.deleteMany({ _id: ofUser });
    return records.deletedCount + parts.deletedCount;
  }

  /** Sweeps every `intervalMs` in the background until the returned stop function is called. */
  sweepEvery(intervalMs: number, onError: (err: unknown) => void): () => void {
    const timer = setInterval(() => void this.sweep().catch(onError), intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}

