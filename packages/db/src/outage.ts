import mongoose from "mongoose";
import { AppError } from "@gw/shared";

/**
 * Socket errors the driver lets through unwrapped: mongodb 6.x rejects a command written to a pooled connection
 * whose server already closed it with Node's own `EPIPE` ("This socket has been ended by the other party"), and a
 * reset connection with `ECONNRESET`, instead of a MongoNetworkError. Nothing else that reaches the error handlers
 * talks over a raw socket (upstream, Stripe and Redis errors are mapped where they happen).
 */
const LOST_SOCKET_CODES = new Set(["EPIPE", "ECONNRESET"]);

const isLostSocket = (err: unknown): boolean =>
  err instanceof Error && "code" in err && typeof err.code === "string" && LOST_SOCKET_CODES.has(err.code);

/**
 * The database could not be reached (no server to select, a connection lost mid-operation): an outage that a retry
 * may outlive, not a bug. Such an error is a 503 `service_unavailable` rather than a 500, so clients know to retry.
 */
export function databaseOutage(err: unknown): AppError | undefined {
  const unreachable = err instanceof mongoose.mongo.MongoServerSelectionError || err instanceof mongoose.mongo.MongoNetworkError || isLostSocket(err);
  if (!unreachable) return undefined;
  return new AppError("service_unavailable", "Service temporarily unavailable: the database is unreachable. Please try again shortly.", { retryAfterSeconds: 5 });
}
