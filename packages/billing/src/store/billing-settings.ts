import { modelOn } from "@gw/db";
import { Schema, type Connection } from "mongoose";

/** A user's balance alerts and auto top-up (CONTRACT 11). Amounts in micro-dollars. `_id` is the user id. */
export interface BillingSettings {
  userId: string;
  /** null: no low-balance e-mail */
  lowBalanceThresholdMicros: number | null;
  autoTopup: {
    enabled: boolean;
    thresholdMicros: number;
    amountMicros: number;
    /** failed attempts in a row (reset by a successful one or by enabling again) */
    failures: number;
    /** attempts that failed, ever: each one makes the next trigger a new one */
    attempts: number;
  };
  /** bumped by every PUT: a new threshold arms the low-balance e-mail again */
  version: number;
  /** the user's newest ledger position and balance when the settings were saved (was it at or above the threshold?) */
  savedAtSeq: number;
  balanceAtSaveMicros: number;
  updatedAt: Date;
}

interface SettingsDoc extends Omit<BillingSettings, "userId"> {
  _id: string;
}

const schema = new Schema<SettingsDoc>({
  _id: { type: String, required: true },
  lowBalanceThresholdMicros: { type: Number, default: null },
  autoTopup: {
    enabled: { type: Boolean, required: true },
    thresholdMicros: { type: Number, required: true },
    amountMicros: { type: Number, required: true },
    failures: { type: Number, required: true },
    attempts: { type: Number, required: true },
  },
  version: { type: Number, required: true },
  savedAtSeq: { type: Number, required: true },
  balanceAtSaveMicros: { type: Number, required: true },
  updatedAt: { type: Date, required: true },
}, { collection: "billing_settings", versionKey: false });

export interface BillingSettingsStore {
  get(userId: string): Promise<BillingSettings | null>;
  put(settings: BillingSettings): Promise<void>;
  /** records a failed auto top-up attempt; `disable` turns auto top-up off */
  recordTopupFailure(userId: string, disable: boolean): Promise<void>;
  /** an attempt went through: the count of failures in a row starts again */
  resetTopupFailures(userId: string): Promise<void>;
}

export function billingSettingsStore(connection: Connection): BillingSettingsStore {
  const model = modelOn(connection, "BillingSettings", () => schema);
  return {
    async get(userId) {
      const doc = await model.findById(userId).lean<SettingsDoc>();
      if (!doc) return null;
      const { _id, ...rest } = doc;
      return { userId: _id, ...rest, lowBalanceThresholdMicros: rest.lowBalanceThresholdMicros ?? null };
    },
    async put(settings) {
      const { userId, ...rest } = settings;
      await model.replaceOne({ _id: userId }, rest, { upsert: true });
    },
    async recordTopupFailure(userId, disable) {
      // one writer per attempt (the instance that claimed its trigger)
      await model.updateOne({ _id: userId }, { $inc: { "autoTopup.failures": 1, "autoTopup.attempts": 1 }, ...(disable ? { $set: { "autoTopup.enabled": false } } : {}) });
    },
    async resetTopupFailures(userId) {
      await model.updateOne({ _id: userId }, { $set: { "autoTopup.failures": 0 } });
    },
  };
}
