import { modelOn } from "@gw/db";
import { Schema, type Connection } from "mongoose";

export interface SessionRecord {
  id: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  renewedAt: number;
  revokedAt?: number;
}

interface SessionDoc {
  _id: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  renewedAt: Date;
  revokedAt?: Date;
}

const sessionSchema = () => new Schema<SessionDoc>({
  _id: String,
  userId: { type: String, required: true, index: true },
  createdAt: { type: Date, required: true },
  expiresAt: { type: Date, required: true },
  renewedAt: { type: Date, required: true },
  revokedAt: Date,
}, { collection: "sessions", versionKey: false });

export interface SessionRepository {
  insert(record: SessionRecord): Promise<void>;
  findById(id: string): Promise<SessionRecord | null>;
  /** a lost concurrent renewal only costs a few minutes of sliding, so a plain update is enough */
  renew(id: string, expiresAt: number, renewedAt: number): Promise<void>;
  revoke(id: string, at: number): Promise<void>;
  revokeAllForUser(userId: string, at: number): Promise<void>;
}

export async function createSessionRepository(connection: Connection): Promise<SessionRepository> {
  const sessions = modelOn(connection, "Session", sessionSchema);
  await sessions.init();
  return {
    async insert(record) {
      await sessions.create({
        _id: record.id,
        userId: record.userId,
        createdAt: new Date(record.createdAt),
        expiresAt: new Date(record.expiresAt),
        renewedAt: new Date(record.renewedAt),
      });
    },
    async findById(id) {
      const doc = await sessions.findById(id).lean<SessionDoc>();
      if (!doc) return null;
      const record: SessionRecord = {
        id: doc._id,
        userId: doc.userId,
        createdAt: doc.createdAt.getTime(),
        expiresAt: doc.expiresAt.getTime(),
        renewedAt: doc.renewedAt.getTime(),
      };
      if (doc.revokedAt) record.revokedAt = doc.revokedAt.getTime();
      return record;
    },
    async renew(id, expiresAt, renewedAt) {
      await sessions.updateOne({ _id: id }, { $set: { expiresAt: new Date(expiresAt), renewedAt: new Date(renewedAt) } });
    },
    async revoke(id, at) {
      await sessions.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: new Date(at) } });
    },
    async revokeAllForUser(userId, at) {
      await sessions.updateMany({ userId, revokedAt: null }, { $set: { revokedAt: new Date(at) } });
    },
  };
}
