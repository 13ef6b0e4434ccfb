import { Schema, type Connection } from "mongoose";
import { isDuplicateKey, modelOn } from "@gw/db";

/** Stripe prices created on demand for plans without `stripePriceId`, keyed by plan id + amount + currency. */
interface PriceDoc {
  _id: string;
  priceId: string;
  planId: string;
  createdAt: Date;
}

const schema = new Schema<PriceDoc>({
  _id: { type: String, required: true },
  priceId: { type: String, required: true, index: true },
  planId: { type: String, required: true },
  createdAt: { type: Date, required: true },
}, { collection: "billing_stripe_prices", versionKey: false });

export interface StripePriceStore {
  get(cacheKey: string): Promise<string | null>;
  /** the first stored price id wins, so every instance ends up using the same price */
  put(cacheKey: string, planId: string, priceId: string, now: Date): Promise<string>;
  planForPrice(priceId: string): Promise<string | null>;
}

export function stripePriceStore(connection: Connection): StripePriceStore {
  const model = modelOn(connection, "BillingStripePrice", () => schema);
  return {
    async get(cacheKey) {
      const doc = await model.findById(cacheKey).lean<PriceDoc>();
      return doc?.priceId ?? null;
    },
    async put(cacheKey, planId, priceId, now) {
      try {
        await model.create({ _id: cacheKey, planId, priceId, createdAt: now });
        return priceId;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const doc = await model.findById(cacheKey).lean<PriceDoc>();
        return doc?.priceId ?? priceId;
      }
    },
    async planForPrice(priceId) {
      const doc = await model.findOne({ priceId }).lean<PriceDoc>();
      return doc?.planId ?? null;
    },
  };
}
