import { Schema, type Connection } from "mongoose";
import { isDuplicateKey, modelOn } from "@gw/db";

/** One document per processed event id: the insert is the once-only claim. */
interface EventDoc {
  _id: string;
  type: string;
  claimedAt: Date;
  completedAt?: Date;
  outcome?: string;
}

const schema = new Schema<EventDoc>({
  _id: { type: String, required: true },
  type: { type: String, required: true },
  claimedAt: { type: Date, required: true },
  completedAt: Date,
  outcome: String,
}, { collection: "billing_webhook_events", versionKey: false });

export type ClaimResult = { claimed: true } | { claimed: false; completed: boolean; claimedAt: Date };

export interface WebhookEventStore {
  claim(eventId: string, type: string, now: Date): Promise<ClaimResult>;
  /** takes over a claim left unfinished by a crashed delivery (handlers are idempotent, so a rerun is safe) */
  reclaim(eventId: string, now: Date): Promise<void>;
  complete(eventId: string, outcome: string, now: Date): Promise<void>;
  /** gives the claim back so the processor's retry runs the event again */
  release(eventId: string): Promise<void>;
}

export function webhookEventStore(connection: Connection): WebhookEventStore {
  const model = modelOn(connection, "BillingWebhookEvent", () => schema);
  return {
    async claim(eventId, type, now) {
      try {
        await model.create({ _id: eventId, type, claimedAt: now });
        return { claimed: true };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const doc = await model.findById(eventId).lean<EventDoc>();
        return { claimed: false, completed: Boolean(doc?.completedAt), claimedAt: doc?.claimedAt ?? now };
      }
    },
    async reclaim(eventId, now) {
      await model.updateOne({ _id: eventId }, { $set: { claimedAt: now } });
    },
    async complete(eventId, outcome, now) {
      await model.updateOne({ _id: eventId }, { $set: { completedAt: now, outcome } });
    },
    async release(eventId) {
      await model.deleteOne({ _id: eventId });
    },
  };
}
