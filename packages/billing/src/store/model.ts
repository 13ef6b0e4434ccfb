import type { Connection, Model, Schema } from "mongoose";

/** One model per connection (tests run several app instances per process, each with its own connection). */
export function modelOn<T>(connection: Connection, name: string, schema: Schema<T>): Model<T> {
  return (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
}
