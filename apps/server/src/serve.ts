import path from "node:path";
import type { Config } from "@gw/config";
import { connectDatabase, startFerretdb, type EmbeddedMongo } from "@gw/db";
import { createApp } from "./app";
import { createLogger } from "./http/logger";

/** Runs the gateway until SIGINT/SIGTERM: embedded FerretDB when MONGODB_URI is unset, then the HTTP server. */
export async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  let embedded: EmbeddedMongo | undefined;
  let uri = config.mongodbUri;
  if (!uri) {
    logger.info({ dataDir: config.dataDir }, "MONGODB_URI unset: starting embedded FerretDB (SQLite backend)");
    embedded = await startFerretdb({ dir: path.join(config.dataDir, "ferretdb"), binary: config.ferretdbBin });
    uri = embedded.uri;
  }
  const db = await connectDatabase(uri);
  const app = await createApp({ config, db, logger });
  const server = app.createServer();
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.listen(config.port, config.host, () => {
    logger.info({ url: config.publicUrl, port: config.port }, "AI gateway listening");
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    // Draining writes to a database that is gone would wait on driver timeouts: bound the whole shutdown.
    setTimeout(() => {
      logger.error("shutdown took longer than 10 s; exiting");
      void embedded?.stop().finally(() => process.exit(1));
    }, 10_000).unref();
    server.close();
    server.closeIdleConnections();
    await app.shutdown();
    await db.close();
    await embedded?.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}
