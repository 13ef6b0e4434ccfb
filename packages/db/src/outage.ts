import mongoose from "mongoose";
import { AppError } from "@gw/shared";

/**
 * The database could not be reached (no server to select, a connection lost mid-operation): an outage that a retry
 * may outlive, not a bug. Such an error is a 503 `service_unavailable` rather than a 500, so clients know to retry.
 */
export function databaseOutage(err: unknown): AppError | undefined {
  const unreachable = err instanceof mongoose.mongo.MongoServerSelectionError || err instanceof mongoose.mongo.MongoNetworkError;
  if (!unreachable) return undefined;
  return new AppError("service_unavailable", "Service temporarily unavailable: the database is unreachable. Please try again shortly.", { retryAfterSeconds: 5 });
}
