import { Schema, type Connection } from "mongoose";
import { isDuplicateKey, modelOn } from "@gw/db";

/** One document per user with a create-subscription in flight: the insert is the claim (no two run at once). */
interface ClaimDoc {
  _id: string;
  claimedAt: Date;
}

const schema = new Schema<ClaimDoc>({
  _id: { type: String, required: true },
  claimedAt: { type: Date, required: true },
}, { collection: "billing_subscribe_claims", versionKey: false });

export interface SubscribeClaimStore {
  /** false while another claim younger than `staleMs` holds the user (one left by a crashed instance is taken over) */
  claim(userId: string, now: Date, staleMs: number): Promise<boolean>;
  release(userId: string, claimedAt: Date): Promise<void>;
}

export function subscribeClaimStore(connection: Connection): SubscribeClaimStore {
  const model = modelOn(connection, "BillingSubscribeClaim", () => schema);
  return {
    async claim(userId, now, staleMs) {
      try {
        await model.create({ _id: userId, claimedAt: now });
        return true;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const held = await model.findById(userId).lean<ClaimDoc>();
      if (held && now.getTime() - held.claimedAt.getTime() < staleMs) return false;
      // a stale claim is removed by its exact value, so two requests cannot both take it over
      if (held && (await model.deleteOne({ _id: userId, claimedAt: held.claimedAt })).deletedCount === 0) return false;
      try {
        await model.create({ _id: userId, claimedAt: now });
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },
    async release(userId, claimedAt) {
      await model.deleteOne({ _id: userId, claimedAt });
    },
  };
}
