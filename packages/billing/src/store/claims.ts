import { Schema, type Connection } from "mongoose";
import { isDuplicateKey, modelOn } from "@gw/db";

interface ClaimDoc {
  _id: string;
  userId: string;
  createdAt: Date;
}

const schema = new Schema<ClaimDoc>({
  _id: { type: String, required: true },
  userId: { type: String, required: true, index: true },
  createdAt: { type: Date, required: true },
}, { collection: "billing_claims", versionKey: false });

/**
 * Things that must happen once across every instance (a low-balance e-mail per crossing, an auto top-up per
 * trigger): the insert of the thing's id is the claim, and the instance whose insert lands does it.
 */
export interface ClaimStore {
  /** true for the one caller that claimed `id` first */
  claim(id: string, userId: string, at: Date): Promise<boolean>;
}

export function claimStore(connection: Connection): ClaimStore {
  const model = modelOn(connection, "BillingClaim", () => schema);
  return {
    async claim(id, userId, at) {
      try {
        await model.create({ _id: id, userId, createdAt: at });
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },
  };
}
