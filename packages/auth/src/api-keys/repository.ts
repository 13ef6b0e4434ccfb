import { Schema, trusted, type Connection, type Model } from "mongoose";
import { newId } from "@gw/shared";
import { isDuplicateKeyError, modelOn } from "../model-registry";
import { NO_CONTROLS, type KeyControls } from "./controls";

/** An API key as stored: never the plaintext key, only its SHA-256 and visible prefix. */
export interface ApiKeyRecord {
  id: string;
  userId: string;
  name: string;
  description: string;
  prefix: string;
  hash: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  usageCount: number;
  /** CONTRACT 10; keys created before the controls existed have none stored (no controls) */
  controls: KeyControls;
}

/** The stored document: the record with its id as `_id`, its controls as fields (absent on older keys). */
type ApiKeyDoc = Omit<ApiKeyRecord, "id" | "controls"> & { _id: string } & Partial<KeyControls>;

const apiKeySchema = new Schema<ApiKeyDoc>(
  {
    _id: { type: String, required: true },
    userId: { type: String, required: true },
    name: { type: String, required: true },
    description: { type: String, default: "" },
    prefix: { type: String, required: true },
    hash: { type: String, required: true },
    createdAt: { type: Date, required: true },
    revokedAt: { type: Date, default: null },
    lastUsedAt: { type: Date, default: null },
    usageCount: { type: Number, default: 0 },
    limitMicros: { type: Number, default: null },
    limitReset: { type: String, default: "never" },
    allowedModels: { type: [String], default: null },
    rateLimit: { type: { _id: false, requestsPerMinute: Number, concurrentRequests: Number }, default: null },
    expiresAt: { type: Date, default: null },
    allowedIps: { type: [String], default: null },
  },
  { collection: "api_keys", versionKey: false },
);
apiKeySchema.index({ hash: 1 }, { unique: true });
apiKeySchema.index({ userId: 1, createdAt: -1 });

/**
 * One row per revoked key: inserting it (unique `_id`) decides which of concurrent revokes answers 200, as FerretDB
 * has no atomic conditional update (its findOneAndUpdate let several revokes of one key each find it active).
 */
interface ApiKeyRevocationDoc {
  _id: string;
  revokedAt: Date;
}

/**
 * Uses of one key counted by one repository (one gateway instance): `_id` is `<keyId>:<writer>`. FerretDB's `$inc` is
 * not atomic (30 concurrent increments of one document left it at 2), so two instances flushing the same key at once
 * lost uses; each row here has a single writer, whose flushes run one at a time.
 */
interface ApiKeyUsageDoc {
  _id: string;
  keyId: string;
  count: number;
  lastUsedAt: Date;
}

/**
 * A secret replaced by a rotation that keeps working until `until` (CONTRACT 10's `grace_seconds`), by its hash.
 */
interface PreviousSecretDoc {
  _id: string;
  keyId: string;
  until: Date;
}

const controlsOf = (doc: Partial<KeyControls>): KeyControls => ({
  limitMicros: doc.limitMicros ?? NO_CONTROLS.limitMicros,
  limitReset: doc.limitReset ?? NO_CONTROLS.limitReset,
  allowedModels: doc.allowedModels ?? NO_CONTROLS.allowedModels,
  rateLimit: doc.rateLimit ? { requestsPerMinute: doc.rateLimit.requestsPerMinute, concurrentRequests: doc.rateLimit.concurrentRequests } : null,
  expiresAt: doc.expiresAt ?? NO_CONTROLS.expiresAt,
  allowedIps: doc.allowedIps ?? NO_CONTROLS.allowedIps,
});

const toRecord = (doc: ApiKeyDoc): ApiKeyRecord => ({
  id: doc._id,
  userId: doc.userId,
  name: doc.name,
  description: doc.description,
  prefix: doc.prefix,
  hash: doc.hash,
  createdAt: doc.createdAt,
  revokedAt: doc.revokedAt ?? null,
  lastUsedAt: doc.lastUsedAt ?? null,
  usageCount: doc.usageCount ?? 0,
  controls: controlsOf(doc),
});

export interface UsageDelta {
  keyId: string;
  count: number;
  lastUsedAt: Date;
}

/** Persistence of API keys; returns plain records, never mongoose documents. */
export class ApiKeyRepository {
  private readonly model: Model<ApiKeyDoc>;
  private readonly revocations: Model<ApiKeyRevocationDoc>;
  private readonly usage: Model<ApiKeyUsageDoc>;
  private readonly previous: Model<PreviousSecretDoc>;
  private readonly writer = newId("w", 16);

  constructor(connection: Connection) {
    this.model = (connection.models.ApiKey as Model<ApiKeyDoc> | undefined) ?? connection.model<ApiKeyDoc>("ApiKey", apiKeySchema);
    this.revocations = modelOn(connection, "ApiKeyRevocation", () => new Schema<ApiKeyRevocationDoc>(
      { _id: String, revokedAt: Date },
      { collection: "api_key_revocations", versionKey: false },
    ));
    this.usage = modelOn(connection, "ApiKeyUsage", () => new Schema<ApiKeyUsageDoc>(
      { _id: String, keyId: { type: String, index: true }, count: Number, lastUsedAt: Date },
      { collection: "api_key_usage", versionKey: false },
    ));
    this.previous = modelOn(connection, "ApiKeyPreviousSecret", () => new Schema<PreviousSecretDoc>(
      { _id: String, keyId: { type: String, index: true }, until: Date },
      { collection: "api_key_previous_secrets", versionKey: false },
    ));
  }

  /** Builds the indexes (the unique hash index above all) before the first insert. */
  async init(): Promise<void> {
    await this.model.init();
    await this.usage.init();
  }

  async insert(record: Omit<ApiKeyRecord, "revokedAt" | "lastUsedAt" | "usageCount">): Promise<ApiKeyRecord> {
    const doc: ApiKeyDoc = { _id: record.id, userId: record.userId, name: record.name, description: record.description,
      prefix: record.prefix, hash: record.hash, createdAt: record.createdAt, revokedAt: null, lastUsedAt: null, usageCount: 0, ...record.controls };
    await this.model.create(doc);
    return toRecord(doc);
  }

  async findActiveByHash(hash: string): Promise<ApiKeyRecord | null> {
    const doc = await this.model.findOne({ hash, revokedAt: null }).lean<ApiKeyDoc>().exec();
    return doc ? toRecord(doc) : null;
  }

  /** An active key of this user (with its usage statistics); null when unknown, foreign or revoked. */
  async findActive(userId: string, keyId: string): Promise<ApiKeyRecord | null> {
    const doc = await this.model.findOne({ _id: keyId, userId, revokedAt: null }).lean<ApiKeyDoc>().exec();
    return doc ? (await this.withUsage([doc]))[0] ?? null : null;
  }

  /** The active key a previous secret (by hash) still opens, and until when; null once it is not valid. */
  async findByPreviousHash(hash: string): Promise<{ record: ApiKeyRecord; until: Date } | null> {
    const previous = await this.previous.findById(hash).lean<PreviousSecretDoc>().exec();
    if (!previous) return null;
    const doc = await this.model.findOne({ _id: previous.keyId, revokedAt: null }).lean<ApiKeyDoc>().exec();
    return doc ? { record: toRecord(doc), until: previous.until } : null;
  }

  /** Hashes of the key's previous secrets (to evict them with the key). */
  async previousHashes(keyId: string): Promise<string[]> {
    return (await this.previous.find({ keyId }).lean<PreviousSecretDoc[]>().exec()).map((d) => d._id);
  }

  /** Replaces the controls of an active key of this user; the updated record, or null when unknown or foreign. */
  async updateControls(userId: string, keyId: string, controls: KeyControls): Promise<ApiKeyRecord | null> {
    const result = await this.model.updateOne({ _id: keyId, userId, revokedAt: null }, { $set: { ...controls } }).exec();
    if (result.matchedCount === 0) return null;
    return this.findActive(userId, keyId);
  }

  /**
   * Gives an active key of this user a new secret; the old one stays valid until `graceUntil` (now: refused at once).
   * Returns the record as it was before (its old hash); null when unknown or foreign; "conflict" when another rotation
   * of the same secret won (the row of the previous secret, unique by its hash, decides: FerretDB has no atomic
   * conditional update).
   */
  async rotate(userId: string, keyId: string, next: { hash: string; prefix: string }, graceUntil: Date): Promise<ApiKeyRecord | null | "conflict"> {
    const doc = await this.model.findOne({ _id: keyId, userId, revokedAt: null }).lean<ApiKeyDoc>().exec();
    if (!doc) return null;
    try {
      await this.previous.create({ _id: doc.hash, keyId, until: graceUntil });
    } catch (err) {
      if (isDuplicateKeyError(err)) return "conflict";
      throw err;
    }
    await this.model.updateOne({ _id: keyId, revokedAt: null }, { $set: { hash: next.hash, prefix: next.prefix } }).exec();
    return toRecord(doc);
  }

  /** Active keys of a user, newest first. */
  async listActive(userId: string): Promise<ApiKeyRecord[]> {
    const docs = await this.model.find({ userId, revokedAt: null }).sort({ createdAt: -1, _id: -1 }).lean<ApiKeyDoc[]>().exec();
    return this.withUsage(docs);
  }

  private async withUsage(docs: ApiKeyDoc[]): Promise<ApiKeyRecord[]> {
    if (docs.length === 0) return [];
    const uses = await this.usage.find({ keyId: trusted({ $in: docs.map((d) => d._id) }) }).lean<ApiKeyUsageDoc[]>().exec();
    const records = new Map(docs.map((doc) => [doc._id, toRecord(doc)]));
    for (const use of uses) {
      const record = records.get(use.keyId);
      if (!record) continue;
      record.usageCount += use.count;
      if (!record.lastUsedAt || use.lastUsedAt > record.lastUsedAt) record.lastUsedAt = use.lastUsedAt;
    }
    return [...records.values()];
  }

  /** Marks one active key of this user revoked; null when unknown, foreign or already revoked. */
  async revoke(userId: string, keyId: string, at: Date): Promise<ApiKeyRecord | null> {
    const doc = await this.model.findOne({ _id: keyId, userId, revokedAt: null }).lean<ApiKeyDoc>().exec();
    if (!doc) return null;
    // The key is revoked before the guard row is written: a crash between the two leaves a revoked key (a later
    // revoke answers 404), never an active one whose revocation is refused.
    await this.model.updateOne({ _id: keyId, revokedAt: null }, { $set: { revokedAt: at } }).exec();
    try {
      await this.revocations.create({ _id: keyId, revokedAt: at });
    } catch (err) {
      // of concurrent revokes of one key only the first insert wins; the others answer 404 as for a revoked key
      if (isDuplicateKeyError(err)) return null;
      throw err;
    }
    return toRecord({ ...doc, revokedAt: at });
  }

  /** Revokes every active key of a user (account deletion); returns what was revoked. */
  async revokeAllForUser(userId: string, at: Date): Promise<ApiKeyRecord[]> {
    const docs = await this.model.find({ userId, revokedAt: null }).lean<ApiKeyDoc[]>().exec();
    if (docs.length === 0) return [];
    await this.model.updateMany({ userId, revokedAt: null }, { $set: { revokedAt: at } }).exec();
    return docs.map((doc) => toRecord({ ...doc, revokedAt: at }));
  }

  /**
   * Adds batched usage to this writer's row of the key. `$max`: a batch holding an older use can be written after a
   * newer one (the list takes the latest over all rows), and must not move `last_used` back.
   */
  async addUsage(delta: UsageDelta): Promise<void> {
    await this.usage.updateOne({ _id: `${delta.keyId}:${this.writer}` },
      { $setOnInsert: { keyId: delta.keyId }, $inc: { count: delta.count }, $max: { lastUsedAt: delta.lastUsedAt } }, { upsert: true }).exec();
  }
}
