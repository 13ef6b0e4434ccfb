import type { Connection, Model, Schema } from "mongoose";

/**
 * The model of this connection under `name`, defined on first use: each app instance has its own connection (tests
 * run several in one process), and `schema` is only built for the first.
 */
export function modelOn<T>(connection: Connection, name: string, schema: () => Schema<T>): Model<T> {
  const existing = connection.models[name] as Model<T> | undefined;
  return existing ?? connection.model<T>(name, schema());
}
