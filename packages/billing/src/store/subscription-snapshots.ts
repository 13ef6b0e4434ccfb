import { Schema, type Connection, type mongo } from "mongoose";
import { findByIds, IdChain, isDuplicateKey, modelOn, type ChainedRef } from "@gw/db";
import type { SubscriptionSnapshot, SubscriptionStatus } from "../subscription-state";

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

/** The snapshots written before the chains existed, by one of their fields (read once by a chain's backfill). */
async function* legacyRefs(docs: mongo.Collection<SnapshotDoc>, field: "userId" | "subscriptionId"): AsyncIterable<ChainedRef> {
  for await (const doc of docs.find({}, { projection: { [field]: 1 } })) yield { owner: doc[field], ref: doc._id };
}

/**
 * Snapshots are read by `_id` only, through insert-only chains of their ids per user and per subscription (`IdChain`,
 * docs/architecture.md): on the embedded FerretDB a query by `userId` would read every user's snapshots.
 */
export function subscriptionSnapshotStore(connection: Connection): SubscriptionSnapshotStore {
  const model = modelOn(connection, "BillingSubscriptionSnapshot", () => schema);
  const docs = model.collection as unknown as mongo.Collection<SnapshotDoc>;
  const byUser = new IdChain(connection, "billing_subscription_snapshots_by_user", () => legacyRefs(docs, "userId"));
  const bySubscription = new IdChain(connection, "billing_subscription_snapshots_by_subscription", () => legacyRefs(docs, "subscriptionId"));
  const read = async (ids: string[]) => (await findByIds(docs, ids)).map(toSnapshot);
  return {
    async insert(snapshot, now) {
      const { id, ...rest } = snapshot;
      // chained first (`add`: a retried event is chained once): a crash before the insert leaves a ref to nothing
      await Promise.all([byUser.add(snapshot.userId, id), bySubscription.add(snapshot.subscriptionId, id)]);
      try {
        await model.create({ _id: id, ...rest, createdAt: now });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    },
    async byUser(userId) {
      return (await read(await byUser.list(userId))).filter((s) => s.userId === userId);
    },
    async bySubscription(subscriptionId) {
      return (await read(await bySubscription.list(subscriptionId))).filter((s) => s.subscriptionId === subscriptionId);
    },
  };
}
