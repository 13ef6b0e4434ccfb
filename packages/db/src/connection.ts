import mongoose, { type Connection } from "mongoose";

// Operator objects smuggled into filters ({"email": {"$ne": null}}) are neutralised by the driver layer too,
// on top of strict zod validation at the edges.
mongoose.set("sanitizeFilter", true);
mongoose.set("strictQuery", true);

export interface Database {
  connection: Connection;
  close(): Promise<void>;
  /** One round trip; throws when the database is unreachable. */
  ping(timeoutMs?: number): Promise<void>;
}

/**
 * Opens a dedicated connection (not the mongoose default), so several app instances can live in one
 * process (tests) and each database name is isolated.
 */
export async function connectDatabase(uri: string, options: { serverSelectionTimeoutMS?: number; socketTimeoutMS?: number } = {}): Promise<Database> {
  const connection = mongoose.createConnection(uri, {
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 5_000,
    // A database that accepts connections but answers nothing (paused, overloaded, cut off without a reset) fails an
    // operation after 10 s of silence, so a request gets its 503 in seconds: the driver's defaults (30 s handshake,
    // no socket timeout) held it for 30-45 s, until the server monitor gave up. Not shorter: a healthy but busy
    // embedded database (a batch insert behind a slow disk sync) must not have its writes cut off.
    socketTimeoutMS: options.socketTimeoutMS ?? 10_000,
    connectTimeoutMS: 5_000,
    maxPoolSize: 50,
    autoIndex: true,
  });
  await connection.asPromise();
  return {
    connection,
    close: () => connection.close(),
    async ping(timeoutMs = 1_000) {
      const db = connection.db;
      if (!db) throw new Error("database not connected");
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("database ping timed out")), timeoutMs);
      });
      try {
        await Promise.race([db.command({ ping: 1 }), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
