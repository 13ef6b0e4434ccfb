import type { Database } from "@gw/db";
import mongoose, { Schema, type Model } from "mongoose";

export type UsageType = "text" | "embedding" | "image" | "tts" | "sts" | "stt";

/** One successful (or partly delivered) request, as billed. Money in micro-dollars. */
export interface UsageRecord {
  id: string;
  userId: string;
  keyId?: string;
  requestId: string;
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
  costMicros: number;
  /** `partial`: a stream cut after output began, charged for what was produced */
  status: "success" | "partial";
  createdAt: Date;
  /** UTC day (YYYY-MM-DD), stored so totals group without date operators */
  day: string;
}

interface UsageDoc extends Omit<UsageRecord, "id"> {
  _id: string;
}

const usageSchema = new Schema<UsageDoc>({
  _id: { type: String, required: true },
  userId: { type: String, required: true },
  keyId: { type: String },
  requestId: { type: String, required: true },
  endpoint: { type: String, required: true },
  model: { type: String, required: true },
  type: { type: String, required: true },
  promptTokens: { type: Number, default: 0 },
  completionTokens: { type: Number, default: 0 },
  characters: { type: Number, default: 0 },
  audioSeconds: { type: Number, default: 0 },
  images: { type: Number, default: 0 },
  processingMs: { type: Number, default: 0 },
  outputBytes: { type: Number, default: 0 },
  costMicros: { type: Number, required: true },
  status: { type: String, required: true },
  createdAt: { type: Date, required: true },
  day: { type: String, required: true },
}, { versionKey: false, collection: "usage_records" });
usageSchema.index({ userId: 1, createdAt: -1 });

export interface UsageQuery {
  userId: string;
  from: Date;
  to: Date;
  model?: string;
  skip: number;
  limit: number;
}

export interface UsageTotalsRow {
  day: string;
  model: string;
  requests: number;
  costMicros: number;
  promptTokens: number;
  completionTokens: number;
  characters: number;
  audioSeconds: number;
  images: number;
}

function toRecord(doc: UsageDoc): UsageRecord {
  const { _id, ...rest } = doc;
  return { id: _id, ...rest };
}

export class UsageRepository {
  private readonly model: Model<UsageDoc>;

  constructor(db: Database) {
    this.model = (db.connection.models.UsageRecord as Model<UsageDoc> | undefined) ?? db.connection.model<UsageDoc>("UsageRecord", usageSchema);
  }

  /** Idempotent: records carry their own ids, so a retried batch skips the ones already written. */
  async insertMany(records: UsageRecord[]): Promise<void> {
    if (records.length === 0) return;
    // keyId left out rather than stored as null for session-authenticated requests (as mongoose did).
    const docs = records.map(({ id, keyId, ...rest }) => (keyId === undefined ? { _id: id, ...rest } : { _id: id, keyId, ...rest }));
    try {
      // lean: records are built by our own code, and hydrating each one into a mongoose document cost more CPU
      // than the rest of the usage path under load.
      await this.model.insertMany(docs, { ordered: false, lean: true });
    } catch (err) {
      const writeErrors = (err as { writeErrors?: Array<{ code?: number; err?: { code?: number } }> }).writeErrors;
      const onlyDuplicates = Array.isArray(writeErrors) && writeErrors.every((e) => (e.code ?? e.err?.code) === 11000);
      if (!onlyDuplicates && (err as { code?: number }).code !== 11000) throw err;
    }
  }

  private filter(q: Pick<UsageQuery, "userId" | "from" | "to" | "model">) {
    return {
      userId: q.userId,
      createdAt: mongoose.trusted({ $gte: q.from, $lt: q.to }),
      ...(q.model ? { model: q.model } : {}),
    };
  }

  async list(q: UsageQuery): Promise<{ records: UsageRecord[]; total: number }> {
    const filter = this.filter(q);
    const [docs, total] = await Promise.all([
      this.model.find(filter).sort({ createdAt: -1, _id: -1 }).skip(q.skip).limit(q.limit).lean<UsageDoc[]>(),
      this.model.countDocuments(filter),
    ]);
    return { records: docs.map(toRecord), total };
  }

  /**
   * Totals per (day, model) over the range. Summed here rather than with $group: FerretDB 1.24 answers
   * `$sum: "$field"` with 0 (measured), so the grouping is done on a projection of the matching records.
   */
  async totals(q: Pick<UsageQuery, "userId" | "from" | "to" | "model">): Promise<UsageTotalsRow[]> {
    const docs = await this.model.find(this.filter(q), {
      _id: 0, day: 1, model: 1, costMicros: 1, promptTokens: 1, completionTokens: 1, characters: 1, audioSeconds: 1, images: 1,
    }).lean<Array<Omit<UsageTotalsRow, "requests">>>();
    const rows = new Map<string, UsageTotalsRow>();
    for (const d of docs) {
      const key = `${d.day}\u0000${d.model}`;
      const row = rows.get(key) ?? { day: d.day, model: d.model, requests: 0, costMicros: 0, promptTokens: 0, completionTokens: 0, characters: 0, audioSeconds: 0, images: 0 };
      row.requests += 1;
      row.costMicros += d.costMicros ?? 0;
      row.promptTokens += d.promptTokens ?? 0;
      row.completionTokens += d.completionTokens ?? 0;
      row.characters += d.characters ?? 0;
      row.audioSeconds += d.audioSeconds ?? 0;
      row.images += d.images ?? 0;
      rows.set(key, row);
    }
    return [...rows.values()];
  }
}
