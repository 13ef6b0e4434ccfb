import type { Connection, Model, Schema } from "mongoose";

/** One model per connection (tests run several app instances per process, each with its own connection). */
export function modelOn<T>(connection: Connection, name: string, schema: Schema<T>): Model<T> {
  return (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
}

/** Mongo duplicate key: the unique-index insert that lost a race (our concurrency primitive on FerretDB). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === "object" && err !== null && "code" in err && (err as { code: unknown }).code === 11000;
}
