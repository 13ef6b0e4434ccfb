// Usage records are not a collection of their own: each request's record is the `meta` of its `settle` ledger
// entry (the charge), so a request costs the database one document, written in the ledger's batched flush. This
// module reads them back for GET /api/usage.
import { LEDGER_COLLECTION } from "@gw/billing/ledger/index";
import type { Database } from "@gw/db";
import type { mongo } from "mongoose";

export type UsageType = "text" | "embedding" | "image" | "tts" | "sts" | "stt";

/**
 * What a settle entry's `meta` holds: one successful (or partly delivered) request. Counters that are 0 and a
 * `success` status are left out: the embedded database's cost per write grows with the number of values, and most
 * counters are 0 for any one modality. (A type, not an interface, so that it is a `Record<string, unknown>`.)
 */
export type StoredUsage = {
  requestId: string;
  keyId?: string;
  endpoint: string;
  model: string;
  type: UsageType;
  promptTokens?: number;
  completionTokens?: number;
  characters?: number;
  audioSeconds?: number;
  images?: number;
  processingMs: number;
  outputBytes: number;
  /** `partial`: a stream cut after output began, charged for what was produced */
  status?: "partial";
  /** when the request finished (the entry itself is written up to a flush interval later) */
  createdAt: Date;
};

/** One usage record as the API shows it. Money in micro-dollars. */
export interface UsageRecord {
  /** the request's hold id, which its settle entry carries */
  id: string;
  userId: string;
  requestId: string;
  keyId?: string;
  endpoint: string;
  model: string;
  type: UsageType;
  promptTokens: number;
  completionTokens: number;
  characters: number;
  audioSeconds: number;
  images: number;
  processingMs: number;
  outputBytes: number;
  /** the charge: the settle entry's `cost` */
  costMicros: number;
  status: "success" | "partial";
  createdAt: Date;
}

/** The fields of a settle entry this module reads. */
interface SettleDoc {
  userId: string;
  kind: string;
  holdId?: string;
  cost?: number;
  meta?: StoredUsage;
}

/** UTC day (YYYY-MM-DD) of a usage record, for the totals per day. */
const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

export interface UsageQuery {
  userId: string;
  from: Date;
  to: Date;
  model?: string;
  /** CONTRACT 11's filters: the key (`meta.keyId`), the route, success or partial */
  keyId?: string;
  endpoint?: string;
  status?: UsageRecord["status"];
  skip: number;
  limit: number;
}

/** The filters of a usage query (what list, totals and the CSV stream share). */
export type UsageFilter = Omit<UsageQuery, "skip" | "limit">;

export interface UsageTotalsRow {
  day: string;
  model: string;
  /** undefined: requests made with a session (the playground) */
  keyId?: string;
  requests: number;
  costMicros: number;
  promptTokens: number;
  completionTokens: number;
  characters: number;
  audioSeconds: number;
  images: number;
}

function toRecord(doc: SettleDoc): UsageRecord | undefined {
  const m = doc.meta;
  if (!m) return undefined;
  return {
    id: doc.holdId ?? "",
    userId: doc.userId,
    requestId: m.requestId,
    keyId: m.keyId,
    endpoint: m.endpoint,
    model: m.model,
    type: m.type,
    promptTokens: m.promptTokens ?? 0,
    completionTokens: m.completionTokens ?? 0,
    characters: m.characters ?? 0,
    audioSeconds: m.audioSeconds ?? 0,
    images: m.images ?? 0,
    processingMs: m.processingMs,
    outputBytes: m.outputBytes,
    costMicros: doc.cost ?? 0,
    status: m.status ?? "success",
    createdAt: m.createdAt,
  };
}

export class UsageRepository {
  private readonly collection: mongo.Collection<SettleDoc>;

  constructor(db: Database) {
    this.collection = db.connection.collection<SettleDoc>(LEDGER_COLLECTION);
  }

  /** Settle entries with a usage record (a settle of a hold opened outside the gateway has none). */
  private filter(q: UsageFilter) {
    return {
      userId: q.userId,
      kind: "settle",
      "meta.createdAt": { $gte: q.from, $lt: q.to },
      ...(q.model ? { "meta.model": q.model } : {}),
      ...(q.keyId ? { "meta.keyId": q.keyId } : {}),
      ...(q.endpoint ? { "meta.endpoint": q.endpoint } : {}),
      // a success is stored without a status (see StoredUsage)
      ...(q.status === "partial" ? { "meta.status": "partial" } : q.status === "success" ? { "meta.status": { $ne: "partial" } } : {}),
    };
  }

  /**
   * Every record of the range, newest first, read through a cursor in batches: a year of records streams in bounded
   * memory (GET /api/usage?format=csv).
   */
  async *stream(q: UsageFilter, batchSize = 500): AsyncGenerator<UsageRecord> {
    const cursor = this.collection.find(this.filter(q), { projection: { _id: 0, userId: 1, holdId: 1, cost: 1, meta: 1 } })
      .sort({ "meta.createdAt": -1, _id: -1 }).batchSize(batchSize);
    try {
      for await (const doc of cursor) {
        const record = toRecord(doc);
        if (record) yield record;
      }
    } finally {
      await cursor.close();
    }
  }

  async list(q: UsageQuery): Promise<{ records: UsageRecord[]; total: number }> {
    const filter = this.filter(q);
    const [docs, total] = await Promise.all([
      this.collection.find(filter, { projection: { _id: 0, userId: 1, holdId: 1, cost: 1, meta: 1 } })
        .sort({ "meta.createdAt": -1, _id: -1 }).skip(q.skip).limit(q.limit).toArray(),
      this.collection.countDocuments(filter),
    ]);
    return { records: docs.map(toRecord).filter((r): r is UsageRecord => r !== undefined), total };
  }

  /**
   * Totals per (day, model, key) over the range. Summed here rather than with $group: FerretDB 1.24 answers
   * `$sum: "$field"` with 0 (measured), so the grouping is done on a projection of the matching entries.
   */
  async totals(q: UsageFilter): Promise<UsageTotalsRow[]> {
    // a cursor, not an array: only the rows are held, whatever the number of records
    const docs = this.collection.find(this.filter(q), {
      projection: {
        _id: 0, cost: 1, "meta.createdAt": 1, "meta.model": 1, "meta.keyId": 1, "meta.promptTokens": 1, "meta.completionTokens": 1,
        "meta.characters": 1, "meta.audioSeconds": 1, "meta.images": 1,
      },
    });
    const rows = new Map<string, UsageTotalsRow>();
    for await (const { cost, meta: m } of docs) {
      if (!m) continue;
      const day = utcDay(m.createdAt);
      const key = `${day}\u0000${m.model}\u0000${m.keyId ?? ""}`;
      const row = rows.get(key) ?? { day, model: m.model, keyId: m.keyId, requests: 0, costMicros: 0, promptTokens: 0, completionTokens: 0, characters: 0, audioSeconds: 0, images: 0 };
      row.requests += 1;
      row.costMicros += cost ?? 0;
      row.promptTokens += m.promptTokens ?? 0;
      row.completionTokens += m.completionTokens ?? 0;
      row.characters += m.characters ?? 0;
      row.audioSeconds += m.audioSeconds ?? 0;
      row.images += m.images ?? 0;
      rows.set(key, row);
    }
    return [...rows.values()];
  }
}
