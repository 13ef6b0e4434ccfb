import mongoose, { type Connection } from "mongoose";

// Operator objects smuggled into filters ({"email": {"$ne": null}}) are neutralised by the driver layer too,
// on top of strict zod validation at the edges.
mongoose.set("sanitizeFilter", true);
mongoose.set("strictQuery", true);

export interface Database {
  connection: Connection;
  close(): Promise<void>;
  /**
   * One round trip; throws when the database is unreachable (a `PingTimeoutError` when it did not answer in time and
   * the driver still holds it connected: busy or hung, not known gone).
   */
  ping(timeoutMs?: number): Promise<void>;
  /** When the database last answered a ping (`Date.now()` milliseconds; the connection's opening before the first). */
  lastAnsweredAt(): number;
  /**
   * Pings every `intervalMs` in the background, one at a time, so `lastAnsweredAt` stays fresh whether or not
   * anything else asks. Returns the function that stops it.
   */
  keepPinging(intervalMs: number): () => void;
}

/** A ping that got no answer within its time: the database may be down, hung, or only busy. */
export class PingTimeoutError extends Error {
  override readonly name = "PingTimeoutError";
  constructor() {
    super("database ping timed out");
  }
}

/** By name, so a copy of this module bundled elsewhere is recognised too. */
export const isPingTimeout = (err: unknown): boolean => (err as Error | undefined)?.name === "PingTimeoutError";

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
  // the connection's handshake was an answer: a status asked before the first ping has something to go on
  let answeredAt = Date.now();
  const ping = async (timeoutMs = 1_000): Promise<void> => {
    const db = connection.db;
    if (!db) throw new Error("database not connected");
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      // no answer from a server the driver already knows is gone (killed, refused: readyState disconnected) is down,
      // not slow: the ping only waits for server selection, and /api/status said "ok" for seconds after a crash
      timer = setTimeout(() => reject(connection.readyState === mongoose.ConnectionStates.disconnected ? new Error("database disconnected") : new PingTimeoutError()), timeoutMs);
    });
    try {
      await Promise.race([db.command({ ping: 1 }), timeout]);
      answeredAt = Date.now();
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    connection,
    close: async () => {
      // closed on purpose: nothing it answered before counts any more
      answeredAt = 0;
      await connection.close();
    },
    ping,
    lastAnsweredAt: () => answeredAt,
    keepPinging(intervalMs) {
      let inFlight = false;
      const timer = setInterval(() => {
        if (inFlight) return;
        inFlight = true;
        // its own failures are what lastAnsweredAt shows; a slow answer still counts when it comes
        ping(BACKGROUND_PING_TIMEOUT_MS).catch(() => undefined).finally(() => { inFlight = false; });
      }, intervalMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}

/** How long a background ping may wait: longer than a busy database's answer, shorter than the driver's own limits. */
const BACKGROUND_PING_TIMEOUT_MS = 5_000;
