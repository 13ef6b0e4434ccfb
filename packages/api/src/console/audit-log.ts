import type { Database } from "@gw/db";
import { randomBase62 } from "@gw/shared";

/** Who did it: an admin through the API, or an operator at the shell (`npm run admin`). */
export interface AuditActor {
  user_id: string | null;
  email: string | null;
  via: "api" | "cli";
}

export interface AuditEntry {
  id: string;
  actor: AuditActor;
  /** e.g. user.credit, user.suspend, user.unsuspend, user.revoke_keys, redemption_code.create */
  action: string;
  target: { type: "user" | "redemption_code" | "model" | "plans" | "credit_packages"; id: string };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  /** the admin's client address; null from the shell */
  ip: string | null;
  created_at: string;
}

type AuditDoc = Omit<AuditEntry, "id" | "created_at"> & { _id: string; createdAt: Date };

export const AUDIT_COLLECTION = "admin_audit";

let lastMs = 0;
let sequence = 0;

/**
 * Ids that sort by the order of writing (the list pages by id): wall-clock milliseconds, a counter within one
 * millisecond of this process, and random characters that keep two instances' ids apart.
 */
function auditId(): string {
  const ms = Date.now();
  sequence = ms === lastMs ? sequence + 1 : 0;
  lastMs = ms;
  return `aud_${ms.toString().padStart(15, "0")}${sequence.toString().padStart(6, "0")}${randomBase62(8)}`;
}

/** The admin actions' audit log: append-only (inserts only; nothing here updates or deletes an entry). */
export class AuditLog {
  constructor(private readonly db: Database, private readonly now: () => number) {}

  private get collection() {
    return this.db.connection.collection<AuditDoc>(AUDIT_COLLECTION);
  }

  async append(entry: Omit<AuditEntry, "id" | "created_at">): Promise<AuditEntry> {
    const doc: AuditDoc = { _id: auditId(), ...entry, createdAt: new Date(this.now()) };
    await this.collection.insertOne(doc);
    return toEntry(doc);
  }

  /** newest first; `before` is the `next_before` of the previous page */
  async list(opts: { limit: number; before?: string }): Promise<{ entries: AuditEntry[]; next_before: string | null }> {
    const filter = opts.before === undefined ? {} : { _id: { $lt: opts.before } };
    const docs = await this.collection.find(filter).sort({ _id: -1 }).limit(opts.limit + 1).toArray();
    const page = docs.slice(0, opts.limit);
    const last = page[page.length - 1];
    return { entries: page.map(toEntry), next_before: docs.length > opts.limit && last ? last._id : null };
  }
}

const toEntry = (doc: AuditDoc): AuditEntry => ({
  id: doc._id, actor: doc.actor, action: doc.action, target: doc.target, before: doc.before, after: doc.after,
  ip: doc.ip, created_at: doc.createdAt.toISOString(),
});
