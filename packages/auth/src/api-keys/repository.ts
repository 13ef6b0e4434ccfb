import { Schema, type Connection, type Model, type mongo } from "mongoose";
import { IdChain, isDuplicateKey, modelOn, type ChainedRef } from "@gw/db";
import { newId } from "@gw/shared";
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
  /** the owner's account is suspended (CONTRACT 12): kept on the key so that verification reads one document */
  suspended: boolean;
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
    suspended: { type: Boolean, default: false },
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
  suspended: doc.suspended ?? false,
  controls: controlsOf(doc),
});

export interface UsageDelta {
  keyId: string;
  count: number;
  lastUsedAt: Date;
}

/** The documents of a collection by one field, read once by a chain's backfill. */
async function* legacyRefs(connection: Connection, collection: string, field: string): AsyncIterable<ChainedRef> {
  const docs = connection.collection<{ _id: string } & Record<string, unknown>>(collection).find({}, { projection: { [field]: 1 } });
  for await (const doc of docs) {
    const owner = doc[field];
    if (typeof owner === "string") yield { owner, ref: doc._id };
  }
}

/**
 * Persistence of API keys; returns plain records, never mongoose documents. Every read and write names documents by
 * `_id` (docs/architecture.md, "Per-account documents by `_id`"): a user's keys, a key's usage rows and the key a
 * secret opens are found through insert-only chains (`IdChain`), each written before the document it names.
 */
export class ApiKeyRepository {
  private readonly model: Model<ApiKeyDoc>;
  private readonly keys: mongo.Collection<ApiKeyDoc>;
  private readonly revocations: Model<ApiKeyRevocationDoc>;
  private readonly usage: Model<ApiKeyUsageDoc>;
  private readonly usageRows: mongo.Collection<ApiKeyUsageDoc>;
  private readonly previous: Model<PreviousSecretDoc>;
  private readonly previousRows: mongo.Collection<PreviousSecretDoc>;
  /** `<userId>:<n>` → key id */
  private readonly keysByUser: IdChain;
  /** `<hash>:1` → the key id whose secret (current or a rotated-out one) has this hash */
  private readonly keyByHash: IdChain;
  /** `<keyId>:<n>` → usage row id */
  private readonly usageByKey: IdChain;
  /** `<keyId>:<n>` → hash of a rotated-out secret */
  private readonly previousByKey: IdChain;
  /** keys whose usage row of this writer is chained already */
  private readonly chainedUsage = new Set<string>();

  /** `writer`: the name of this repository's usage row of each key, written by no other at the same time */
  constructor(connection: Connection, private readonly writer = newId("w", 16)) {
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
    this.keys = this.model.collection as unknown as mongo.Collection<ApiKeyDoc>;
    this.usageRows = this.usage.collection as unknown as mongo.Collection<ApiKeyUsageDoc>;
    this.previousRows = this.previous.collection as unknown as mongo.Collection<PreviousSecretDoc>;
    this.keysByUser = new IdChain(connection, "api_keys_by_user", () => legacyRefs(connection, "api_keys", "userId"));
    this.keyByHash = new IdChain(connection, "api_keys_by_hash", () => legacyRefs(connection, "api_keys", "hash"));
    this.usageByKey = new IdChain(connection, "api_key_usage_by_key", () => legacyRefs(connection, "api_key_usage", "keyId"));
    this.previousByKey = new IdChain(connection, "api_key_previous_secrets_by_key", () => legacyRefs(connection, "api_key_previous_secrets", "keyId"));
  }

  /**
   * Builds the indexes (the unique hash index above all) before the first insert, and chains the keys and usage rows
   * of a database written before the chains existed (once per database, at the first start of this version).
   */
  async init(): Promise<void> {
    await this.model.init();
    await this.usage.init();
    await Promise.all([this.keysByUser.ready(), this.keyByHash.ready(), this.usageByKey.ready(), this.previousByKey.ready()]);
  }

  async insert(record: Omit<ApiKeyRecord, "revokedAt" | "lastUsedAt" | "usageCount" | "suspended">): Promise<ApiKeyRecord> {
    const doc: ApiKeyDoc = { _id: record.id, userId: record.userId, name: record.name, description: record.description,
      prefix: record.prefix, hash: record.hash, createdAt: record.createdAt, revokedAt: null, lastUsedAt: null, usageCount: 0, suspended: false, ...record.controls };
    // chained first: a crash before the key's insert leaves refs to nothing, which readers skip
    await Promise.all([this.keysByUser.append(record.userId, record.id), this.keyByHash.appendToNew(record.hash, record.id)]);
    await this.model.create(doc);
    return toRecord(doc);
  }

  /** One key by `_id`, when it is active (and this user's, when named). */
  private async activeDoc(keyId: string, userId?: string): Promise<ApiKeyDoc | null> {
    const doc = await this.keys.findOne({ _id: keyId });
    return doc && doc.revokedAt == null && (userId === undefined || doc.userId === userId) ? doc : null;
  }

  /** The active key whose current secret has this hash: two `_id` lookups (a cold key on the verifier's path). */
  async findActiveByHash(hash: string): Promise<ApiKeyRecord | null> {
    const keyId = await this.keyByHash.first(hash);
    const doc = keyId === null ? null : await this.activeDoc(keyId);
    return doc?.hash === hash ? toRecord(doc) : null;
  }

  /** An active key of this user (with its usage statistics); null when unknown, foreign or revoked. */
  async findActive(userId: string, keyId: string): Promise<ApiKeyRecord | null> {
    const doc = await this.activeDoc(keyId, userId);
    return doc && this.withUsage(doc);
  }

  /** The active key a previous secret (by hash) still opens, and until when; null once it is not valid. */
  async findByPreviousHash(hash: string): Promise<{ record: ApiKeyRecord; until: Date } | null> {
    const previous = await this.previous.findById(hash).lean<PreviousSecretDoc>().exec();
    if (!previous) return null;
    const doc = await this.activeDoc(previous.keyId);
    return doc ? { record: toRecord(doc), until: previous.until } : null;
  }

  /** Hashes of the key's previous secrets (to evict them with the key). */
  async previousHashes(keyId: string): Promise<string[]> {
    return (await this.previousByKey.documents(keyId, this.previousRows)).map((d) => d._id);
  }

  /** Replaces the controls of an active key of this user; the updated record, or null when unknown or foreign. */
  async updateControls(userId: string, keyId: string, controls: KeyControls): Promise<ApiKeyRecord | null> {
    if (!(await this.activeDoc(keyId, userId))) return null;
    await this.model.updateOne({ _id: keyId }, { $set: { ...controls } }).exec();
    return this.findActive(userId, keyId);
  }

  /**
   * Gives an active key of this user a new secret; the old one stays valid until `graceUntil` (now: refused at once).
   * Returns the record as it was before (its old hash); null when unknown or foreign; "conflict" when another rotation
   * of the same secret won (the row of the previous secret, unique by its hash, decides: FerretDB has no atomic
   * conditional update).
   */
  async rotate(userId: string, keyId: string, next: { hash: string; prefix: string }, graceUntil: Date): Promise<ApiKeyRecord | null | "conflict"> {
    const doc = await this.activeDoc(keyId, userId);
    if (!doc) return null;
    await this.previousByKey.add(keyId, doc.hash);
    try {
      await this.previous.create({ _id: doc.hash, keyId, until: graceUntil });
    } catch (err) {
      if (isDuplicateKey(err)) return "conflict";
      throw err;
    }
    await this.keyByHash.appendToNew(next.hash, keyId);
    await this.model.updateOne({ _id: keyId }, { $set: { hash: next.hash, prefix: next.prefix } }).exec();
    return toRecord(doc);
  }

  /** Active keys of a user (with their usage statistics), newest first; a key's usage is read as soon as the key is. */
  async listActive(userId: string): Promise<ApiKeyRecord[]> {
    const records = await this.keysByUser.resolve(userId, async (keyId) => {
      const doc = await this.activeDoc(keyId, userId);
      return doc && this.withUsage(doc);
    });
    return records.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  /** The user's active keys, through the user's chain. */
  private async activeDocsOf(userId: string): Promise<ApiKeyDoc[]> {
    const docs = await this.keysByUser.documents(userId, this.keys);
    return docs.filter((doc) => doc.userId === userId && doc.revokedAt == null);
  }

  /** The key with the uses its usage rows add up. */
  private async withUsage(doc: ApiKeyDoc): Promise<ApiKeyRecord> {
    const record = toRecord(doc);
    for (const use of await this.usageByKey.documents(doc._id, this.usageRows)) {
      if (use.keyId !== doc._id) continue;
      record.usageCount += use.count;
      if (!record.lastUsedAt || use.lastUsedAt > record.lastUsedAt) record.lastUsedAt = use.lastUsedAt;
    }
    return record;
  }

  /** Marks one active key of this user revoked; null when unknown, foreign or already revoked. */
  async revoke(userId: string, keyId: string, at: Date): Promise<ApiKeyRecord | null> {
    const doc = await this.activeDoc(keyId, userId);
    if (!doc) return null;
    // The key is revoked before the guard row is written: a crash between the two leaves a revoked key (a later
    // revoke answers 404), never an active one whose revocation is refused.
    await this.model.updateOne({ _id: keyId }, { $set: { revokedAt: at } }).exec();
    try {
      await this.revocations.create({ _id: keyId, revokedAt: at });
    } catch (err) {
      // of concurrent revokes of one key only the first insert wins; the others answer 404 as for a revoked key
      if (isDuplicateKey(err)) return null;
      throw err;
    }
    return toRecord({ ...doc, revokedAt: at });
  }

  /** Revokes every active key of a user (account deletion); returns what was revoked. */
  async revokeAllForUser(userId: string, at: Date): Promise<ApiKeyRecord[]> {
    const docs = await this.activeDocsOf(userId);
    await Promise.all(docs.map((doc) => this.model.updateOne({ _id: doc._id }, { $set: { revokedAt: at } }).exec()));
    return docs.map((doc) => toRecord({ ...doc, revokedAt: at }));
  }

  /** Marks every active key of a user suspended or not (the owner's suspension); returns those keys. */
  async setSuspendedForUser(userId: string, suspended: boolean): Promise<ApiKeyRecord[]> {
    const docs = await this.activeDocsOf(userId);
    await Promise.all(docs.map((doc) => this.model.updateOne({ _id: doc._id }, { $set: { suspended } }).exec()));
    return docs.map((doc) => toRecord({ ...doc, suspended }));
  }

  /**
   * Adds batched usage to this writer's row of the key. `$max`: a batch holding an older use can be written after a
   * newer one (the list takes the latest over all rows), and must not move `last_used` back.
   */
  async addUsage(delta: UsageDelta): Promise<void> {
    const rowId = `${delta.keyId}:${this.writer}`;
    if (!this.chainedUsage.has(delta.keyId)) {
      await this.usageByKey.add(delta.keyId, rowId);
      if (this.chainedUsage.size >= 100_000) this.chainedUsage.clear(); // bounded: a forgotten key costs one more `add`
      this.chainedUsage.add(delta.keyId);
    }
    await this.usage.updateOne({ _id: rowId },
      { $setOnInsert: { keyId: delta.keyId }, $inc: { count: delta.count }, $max: { lastUsedAt: delta.lastUsedAt } }, { upsert: true }).exec();
  }
}
