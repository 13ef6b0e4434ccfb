import { Schema, type Connection } from "mongoose";
import { isDuplicateKey, modelOn } from "@gw/db";

/** One billing account per user: the link to the user's Stripe customer. `_id` is the user id. */
export interface BillingAccount {
  userId: string;
  stripeCustomerId: string;
  /** the saved card auto top-up charges (the customer's default payment method) */
  defaultPaymentMethodId?: string;
  createdAt: Date;
}

interface BillingAccountDoc {
  _id: string;
  stripeCustomerId: string;
  defaultPaymentMethodId?: string;
  createdAt: Date;
}

const schema = new Schema<BillingAccountDoc>({
  _id: { type: String, required: true },
  stripeCustomerId: { type: String, required: true, index: true },
  defaultPaymentMethodId: { type: String },
  createdAt: { type: Date, required: true },
}, { collection: "billing_accounts", versionKey: false });

const toAccount = (doc: BillingAccountDoc): BillingAccount => ({
  userId: doc._id, stripeCustomerId: doc.stripeCustomerId, createdAt: doc.createdAt,
  ...(doc.defaultPaymentMethodId ? { defaultPaymentMethodId: doc.defaultPaymentMethodId } : {}),
});

export interface BillingAccountStore {
  byUser(userId: string): Promise<BillingAccount | null>;
  byCustomer(customerId: string): Promise<BillingAccount | null>;
  /** first writer wins; returns the stored account (the winner's when a concurrent insert got there first) */
  insert(account: BillingAccount): Promise<BillingAccount>;
  setDefaultPaymentMethod(userId: string, paymentMethodId: string): Promise<void>;
}

export function billingAccountStore(connection: Connection): BillingAccountStore {
  const model = modelOn(connection, "BillingAccount", () => schema);
  return {
    async byUser(userId) {
      const doc = await model.findById(userId).lean<BillingAccountDoc>();
      return doc ? toAccount(doc) : null;
    },
    async byCustomer(customerId) {
      const doc = await model.findOne({ stripeCustomerId: customerId }).lean<BillingAccountDoc>();
      return doc ? toAccount(doc) : null;
    },
    async insert(account) {
      try {
        await model.create({ _id: account.userId, stripeCustomerId: account.stripeCustomerId, createdAt: account.createdAt });
        return account;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const existing = await model.findById(account.userId).lean<BillingAccountDoc>();
        if (!existing) throw err;
        return toAccount(existing);
      }
    },
    async setDefaultPaymentMethod(userId, paymentMethodId) {
      await model.updateOne({ _id: userId }, { $set: { defaultPaymentMethodId: paymentMethodId } });
    },
  };
}
