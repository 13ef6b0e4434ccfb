import type { ChatMessage } from "@gw/providers";
import type { Database } from "@gw/db";
import { AppError } from "@gw/shared";
import { Schema, type Model } from "mongoose";

/** How long a stored response is kept (docs/api.md): OpenAI keeps them 30 days too. */
export const RESPONSE_RETENTION_DAYS = 30;
const RETENTION_MS = RESPONSE_RETENTION_DAYS * 24 * 60 * 60_000;

/**
 * A stored response, looked up by `_id` alone (the embedded FerretDB finds nothing else efficiently); the owner is
 * checked on the document. JSON is kept as text: key names of client data (metadata, schemas) stay safe for the database.
 */
interface ResponseDoc {
  _id: string;
  userId: string;
  /** the Response object as answered */
  response: string;
  /** the conversation up to and including this answer (ChatMessage[]), without `instructions` */
  conversation: string;
  createdAt: Date;
  expiresAt: Date;
}

const schema = new Schema<ResponseDoc>({
  _id: { type: String, required: true },
  userId: { type: String, required: true },
  response: { type: String, required: true },
  conversation: { type: String, required: true },
  createdAt: { type: Date, required: true },
  expiresAt: { type: Date, required: true },
}, { versionKey: false, collection: "gateway_responses" });

const notFound = (id: string) => new AppError("not_found", `No response found with id '${id.slice(0, 200)}'.`);

/** The stored responses of /v1/responses (`store`, `previous_response_id`, GET and DELETE), per account. */
export class ResponseStore {
  private readonly model: Model<ResponseDoc>;

  constructor(db: Database, private readonly now: () => number) {
    this.model = (db.connection.models.GatewayResponse as Model<ResponseDoc> | undefined) ?? db.connection.model<ResponseDoc>("GatewayResponse", schema);
  }

  async save(userId: string, id: string, response: Record<string, unknown>, conversation: readonly ChatMessage[]): Promise<void> {
    const createdAt = new Date(this.now());
    await this.model.insertMany([{
      _id: id, userId, response: JSON.stringify(response), conversation: JSON.stringify(conversation),
      createdAt, expiresAt: new Date(createdAt.getTime() + RETENTION_MS),
    }], { lean: true });
  }

  /** The caller's own live response; another account's, an expired or an unknown id is 404 not_found. */
  private async find(userId: string, id: string): Promise<ResponseDoc> {
    const doc = await this.model.findById(id).lean();
    if (!doc || doc.userId !== userId || doc.expiresAt.getTime() <= this.now()) throw notFound(id);
    return doc;
  }

  async response(userId: string, id: string): Promise<unknown> {
    return JSON.parse((await this.find(userId, id)).response) as unknown;
  }

  async conversation(userId: string, id: string): Promise<ChatMessage[]> {
    return JSON.parse((await this.find(userId, id)).conversation) as ChatMessage[];
  }

  async delete(userId: string, id: string): Promise<void> {
    await this.find(userId, id);
    await this.model.deleteOne({ _id: id });
  }

  async forgetUser(userId: string): Promise<void> {
    await this.model.collection.deleteMany({ userId });
  }

  /** Deletes expired responses every `intervalMs`; returns the stop function. */
  sweepEvery(intervalMs: number, onError: (err: unknown) => void): () => void {
    const timer = setInterval(() => {
      this.model.collection.deleteMany({ expiresAt: { $lt: new Date(this.now()) } }).catch(onError);
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}
