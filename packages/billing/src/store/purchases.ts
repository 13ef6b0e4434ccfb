import { Schema, type Connection } from "mongoose";
import { findByIds, isDuplicateKey, modelOn } from "@gw/db";

/** A credit purchase we asked the processor for; the webhook grants it once the money arrives. */
export interface Purchase {
  id: string;
  userId: string;
  /** `external`: a payment intent made outside the gateway whose signed event names the user (see the webhook) */
  source: "payment_intent" | "checkout" | "external" | "auto_topup";
  /** what the user pays, in cents */
  amountCents: number;
  currency: string;
  creditsMicros: number;
  bonusMicros: number;
  paymentIntentId?: string;
  checkoutSessionId?: string;
  /** the processor's receipt of the paying charge, once an event told it */
  receiptUrl?: string;
  createdAt: Date;
}

interface PurchaseDoc extends Omit<Purchase, "id"> {
  _id: string;
}

const schema = new Schema<PurchaseDoc>({
  _id: { type: String, required: true },
  userId: { type: String, required: true, index: true },
  source: { type: String, required: true },
  amountCents: { type: Number, required: true },
  currency: { type: String, required: true },
  creditsMicros: { type: Number, required: true },
  bonusMicros: { type: Number, required: true },
  paymentIntentId: { type: String, index: true },
  checkoutSessionId: { type: String, index: true },
  receiptUrl: { type: String },
  createdAt: { type: Date, required: true },
}, { collection: "billing_purchases", versionKey: false });

const toPurchase = ({ _id, ...rest }: PurchaseDoc): Purchase => ({ id: _id, ...rest });

export interface PurchaseStore {
  insert(purchase: Purchase): Promise<void>;
  /** first writer wins: returns the stored purchase (the winner's when a concurrent insert of the same id got there first) */
  insertOnce(purchase: Purchase): Promise<Purchase>;
  /** records the processor's object ids once known (a plain update: ids never change once set) */
  link(id: string, ids: { paymentIntentId?: string; checkoutSessionId?: string; receiptUrl?: string }): Promise<void>;
  byIds(ids: string[]): Promise<Purchase[]>;
  byId(id: string): Promise<Purchase | null>;
  /** newest purchase announcing this payment intent */
  byPaymentIntent(paymentIntentId: string): Promise<Purchase | null>;
}

export function purchaseStore(connection: Connection): PurchaseStore {
  const model = modelOn(connection, "BillingPurchase", () => schema);
  const docs = connection.collection<PurchaseDoc>(model.collection.collectionName);
  return {
    async insert(purchase) {
      const { id, ...rest } = purchase;
      await model.create({ _id: id, ...rest });
    },
    async insertOnce(purchase) {
      const { id, ...rest } = purchase;
      try {
        await model.create({ _id: id, ...rest });
        return purchase;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const existing = await model.findById(id).lean<PurchaseDoc>();
        if (!existing) throw err;
        return toPurchase(existing);
      }
    },
    async link(id, ids) {
      const set: Record<string, string> = {};
      if (ids.paymentIntentId) set.paymentIntentId = ids.paymentIntentId;
      if (ids.checkoutSessionId) set.checkoutSessionId = ids.checkoutSessionId;
      if (ids.receiptUrl) set.receiptUrl = ids.receiptUrl;
      if (Object.keys(set).length > 0) await model.updateOne({ _id: id }, { $set: set });
    },
    async byId(id) {
      const doc = await model.findById(id).lean<PurchaseDoc>();
      return doc ? toPurchase(doc) : null;
    },
    // one `_id` lookup each: FerretDB answers `$in` by reading the whole collection
    async byIds(ids) {
      return (await findByIds(docs, ids)).map(toPurchase);
    },
    async byPaymentIntent(paymentIntentId) {
      const doc = await model.findOne({ paymentIntentId }).sort({ createdAt: -1 }).lean<PurchaseDoc>();
      return doc ? toPurchase(doc) : null;
    },
  };
}
