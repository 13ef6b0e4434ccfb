import { Schema, trusted, type Connection } from "mongoose";
import { isDuplicateKey, modelOn } from "@gw/db";

// Redemption codes on a database without transactions, where concurrent updates of one document are not atomic
// (FerretDB): every decision that must be exact is the insert of a document with a unique `_id`.
// - `redemption_claims` `_id = <code>:<userId>`: one redemption of a code per user in flight or done.
// - `redemption_slots` `_id = <code>#<n>`, n = 1..max_redemptions: a slot taken by a user; there are no more slots
//   than max_redemptions, so no more redemptions.
// The credit itself is a ledger entry whose idempotency key is `redeem:<code>:<userId>`, so a retry after a crash
// between the steps never credits twice.

/** A code as stored. Money in micro-dollars. */
export interface RedemptionCodeRecord {
  code: string;
  amount: number;
  maxRedemptions: number;
  expiresAt: Date | null;
  createdAt: Date;
  /** the admin who made it (user id), or `cli` */
  createdBy: string;
}

type CodeDoc = Omit<RedemptionCodeRecord, "code"> & { _id: string };

interface ClaimDoc {
  _id: string;
  code: string;
  userId: string;
  claimedAt: Date;
  /** set once the ledger holds the credit */
  creditedAt?: Date;
}

interface SlotDoc {
  _id: string;
  code: string;
  n: number;
  userId: string;
}

const codeSchema = () => new Schema<CodeDoc>({
  _id: { type: String, required: true },
  amount: { type: Number, required: true },
  maxRedemptions: { type: Number, required: true },
  expiresAt: { type: Date, default: null },
  createdAt: { type: Date, required: true, index: true },
  createdBy: { type: String, required: true },
}, { collection: "redemption_codes", versionKey: false });

const claimSchema = () => new Schema<ClaimDoc>({
  _id: { type: String, required: true },
  code: { type: String, required: true, index: true },
  userId: { type: String, required: true },
  claimedAt: { type: Date, required: true },
  creditedAt: Date,
}, { collection: "redemption_claims", versionKey: false });

const slotSchema = () => {
  const schema = new Schema<SlotDoc>({
    _id: { type: String, required: true },
    code: { type: String, required: true },
    n: { type: Number, required: true },
    userId: { type: String, required: true },
  }, { collection: "redemption_slots", versionKey: false });
  schema.index({ code: 1, userId: 1 });
  return schema;
};

/** Slots to try: those after the ones taken so far, then the gaps a freed slot left. */
function* slotOrder(taken: number, max: number): Generator<number> {
  for (let n = taken + 1; n <= max; n++) yield n;
  for (let n = 1; n <= Math.min(taken, max); n++) yield n;
}

const toRecord = (doc: CodeDoc): RedemptionCodeRecord => ({
  code: doc._id, amount: doc.amount, maxRedemptions: doc.maxRedemptions, expiresAt: doc.expiresAt ?? null,
  createdAt: doc.createdAt, createdBy: doc.createdBy,
});

export type RedemptionStore = ReturnType<typeof redemptionStore>;

export function redemptionStore(connection: Connection) {
  const codes = modelOn(connection, "RedemptionCode", codeSchema);
  const claims = modelOn(connection, "RedemptionClaim", claimSchema);
  const slots = modelOn(connection, "RedemptionSlot", slotSchema);
  const claimId = (code: string, userId: string) => `${code}:${userId}`;

  /** Inserts; false when the `_id` is taken. */
  async function insertOnce(insert: () => Promise<unknown>): Promise<boolean> {
    try {
      await insert();
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  return {
    async init(): Promise<void> {
      await Promise.all([codes.init(), claims.init(), slots.init()]);
    },

    /** false when the code exists already */
    createCode: (record: RedemptionCodeRecord) => insertOnce(() => codes.create({
      _id: record.code, amount: record.amount, maxRedemptions: record.maxRedemptions, expiresAt: record.expiresAt,
      createdAt: record.createdAt, createdBy: record.createdBy,
    })),

    async findCode(code: string): Promise<RedemptionCodeRecord | null> {
      const doc = await codes.findById(code).lean<CodeDoc>();
      return doc ? toRecord(doc) : null;
    },

    /** newest first, from after `before` (a code of the previous page) */
    async listCodes(limit: number, before?: RedemptionCodeRecord): Promise<RedemptionCodeRecord[]> {
      const filter = before
        ? { $or: [{ createdAt: trusted({ $lt: before.createdAt }) }, { createdAt: before.createdAt, _id: trusted({ $lt: before.code }) }] }
        : {};
      const docs = await codes.find(filter).sort({ createdAt: -1, _id: -1 }).limit(limit).lean<CodeDoc[]>();
      return docs.map(toRecord);
    },

    /** slots taken: redemptions done or in flight */
    redeemedCount: (code: string) => slots.countDocuments({ code }),

    /** the claim of a user on a code: false when one exists already */
    claim: (code: string, userId: string, at: Date) => insertOnce(() => claims.create({ _id: claimId(code, userId), code, userId, claimedAt: at })),

    async findClaim(code: string, userId: string): Promise<ClaimDoc | null> {
      return claims.findById(claimId(code, userId)).lean<ClaimDoc>();
    },

    /**
     * Takes over a claim left by a request that stopped (crash): removed by its exact value, then inserted anew, so
     * of two requests taking it over at once only one succeeds.
     */
    async takeOverClaim(held: ClaimDoc, at: Date): Promise<boolean> {
      if ((await claims.deleteOne({ _id: held._id, claimedAt: held.claimedAt })).deletedCount === 0) return false;
      return insertOnce(() => claims.create({ _id: held._id, code: held.code, userId: held.userId, claimedAt: at }));
    },

    async releaseClaim(code: string, userId: string, claimedAt: Date): Promise<void> {
      await claims.deleteOne({ _id: claimId(code, userId), claimedAt, creditedAt: null });
    },

    async markCredited(code: string, userId: string, at: Date): Promise<void> {
      await claims.updateOne({ _id: claimId(code, userId) }, { $set: { creditedAt: at } });
    },

    /** claims neither credited nor touched since `before`: their requests stopped midway */
    async abandonedClaims(code: string, before: Date): Promise<ClaimDoc[]> {
      return claims.find({ code, creditedAt: null, claimedAt: trusted({ $lt: before }) }).lean<ClaimDoc[]>();
    },

    /** the slot this user holds on the code (the lowest, should a takeover have left two) */
    async slotOf(code: string, userId: string): Promise<number | null> {
      const held = await slots.find({ code, userId }).sort({ n: 1 }).lean<SlotDoc[]>();
      const [mine, ...extra] = held;
      // two requests of one user that both took a slot (a claim taken over while its first request still ran):
      // the user keeps the lowest, the others go back
      for (const slot of extra) await slots.deleteOne({ _id: slot._id, userId });
      return mine ? mine.n : null;
    },

    /** Takes a free slot 1..max for the user; null when every slot is taken. */
    async takeSlot(code: string, userId: string, max: number): Promise<number | null> {
      const taken = await slots.countDocuments({ code });
      for (const n of slotOrder(taken, max)) {
        if (await insertOnce(() => slots.create({ _id: `${code}#${n}`, code, n, userId }))) return n;
      }
      return null;
    },

    async freeSlots(code: string, userId: string): Promise<void> {
      await slots.deleteMany({ code, userId });
    },
  };
}
