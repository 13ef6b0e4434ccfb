import { Schema, type Connection } from "mongoose";
import type { SubscriptionSnapshot, SubscriptionStatus } from "../subscription-state";
import { isDuplicateKey, modelOn } from "./model";

interface SnapshotDoc extends Omit<SubscriptionSnapshot, "id"> {
  _id: string;
  createdAt: Date;
}

const schema = new Schema<SnapshotDoc>({
  _id: { type: String, required: true },
  subscriptionId: { type: String, required: true, index: true },
  userId: { type: String, required: true, index: true },
  planId: { type: String, required: true },
  status: { type: String, required: true },
  at: { type: Number, required: true },
  periodStart: Number,
  periodEnd: Number,
  cancelAtPeriodEnd: Boolean,
  createdAt: { type: Date, required: true },
}, { collection: "billing_subscription_snapshots", versionKey: false });

const toSnapshot = ({ _id, createdAt: _createdAt, ...rest }: SnapshotDoc): SubscriptionSnapshot => ({
  id: _id, ...rest, status: rest.status as SubscriptionStatus,
});

export interface SubscriptionSnapshotStore {
  /** inserts once per snapshot id (event id); a duplicate changes nothing */
  insert(snapshot: SubscriptionSnapshot, now: Date): Promise<void>;
  byUser(userId: string): Promise<SubscriptionSnapshot[]>;
  bySubscription(subscriptionId: string): Promise<SubscriptionSnapshot[]>;
}

export function subscriptionSnapshotStore(connection: Connection): SubscriptionSnapshotStore {
  const model = modelOn(connection, "BillingSubscriptionSnapshot", schema);
  return {
    async insert(snapshot, now) {
      const { id, ...rest } = snapshot;
      try {
        await model.create({ _id: id, ...rest, createdAt: now });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    },
    async byUser(userId) {
      return (await model.find({ userId }).lean<SnapshotDoc[]>()).map(toSnapshot);
    },
    async bySubscription(subscriptionId) {
      return (await model.find({ subscriptionId }).lean<SnapshotDoc[]>()).map(toSnapshot);
    },
  };
}
