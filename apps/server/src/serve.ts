import type { Server, ServerResponse } from "node:http";
import path from "node:path";
import type { Config } from "@gw/config";
import { BACKGROUND_NICENESS, connectDatabase, startFerretdb, type EmbeddedMongo } from "@gw/db";
import { createApp } from "./app";
import { createLogger } from "./http/logger";

/** On SIGTERM, requests in flight get this long to be answered (a Flux image takes seconds) before the gateway stops. */
const DRAIN_MS = 20_000;
/** The whole shutdown, drain included: draining writes to a database that is gone would wait on driver timeouts. */
const SHUTDOWN_LIMIT_MS = 30_000;

/**
 * Stops accepting connections and waits, at most `ms`, until the requests in flight are answered. Keep-alive
 * connections turn idle as their last answer ends, and are closed as they do (`close()` closes only those idle now).
 * Requests still running then (a stream that keeps sending) are cut as if their client had gone, so that they are
 * charged for what they produced before the ledger's last flush, as a cut stream always is. Answers not begun yet say
 * `Connection: close`, and so do those of requests that still arrive on an open connection: a client told keep-alive
 * sends its next request on that connection, which the drain then closes under it (ECONNRESET, a POST it cannot
 * tell was not run), instead of opening a new one the closed port refuses (a clean "try elsewhere").
 */
async function drain(server: Server, open: Set<ServerResponse>, ms: number): Promise<void> {
  for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
  server.prependListener("request", (_req, res: ServerResponse) => { res.shouldKeepAlive = false; });
  let sweep: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    sweep = setInterval(() => server.closeIdleConnections(), 100);
    deadline = setTimeout(() => {
      server.closeAllConnections();
      resolve();
    }, ms);
  });
  clearInterval(sweep);
  clearTimeout(deadline);
}

/** The answers being written, for the drain (one Set entry per request in flight). */
function trackResponses(server: Server): Set<ServerResponse> {
  const open = new Set<ServerResponse>();
  server.prependListener("request", (_req, res: ServerResponse) => {
    open.add(res);
    res.once("close", () => open.delete(res));
  });
  return open;
}

/**
 * Listens on HOST:PORT. A refusal (the port taken, a host name that does not resolve or is not this machine's) stops
 * the start with a message naming the setting, instead of an unhandled 'error' event and its stack trace.
 */
function listen(server: Server, config: Config): Promise<void> {
  return new Promise((resolve, reject) => {
    const refused = (err: NodeJS.ErrnoException) => {
      reject(new Error(err.code === "EADDRINUSE"
        ? `PORT ${config.port} is already in use on HOST ${config.host}: stop what listens there or set another PORT`
        : `cannot listen on HOST ${config.host} PORT ${config.port}: ${err.message}`));
    };
    server.once("error", refused);
    server.listen(config.port, config.host, () => {
      server.off("error", refused);
      resolve();
    });
  });
}

/** The exit code of a process that these signals end (128 + the signal's number), as Node's default handling gives. */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

/** Runs the gateway until SIGINT/SIGTERM/SIGHUP: embedded FerretDB when MONGODB_URI is unset, then the HTTP server. */
export async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel, config.observability.otlp !== undefined);
  // A signal while the gateway starts (FerretDB starting, the database's indexes being made) exits at once, through
  // process.exit: its 'exit' hook stops the embedded FerretDB, which Node's default handling (the process just ends)
  // left running in its own process group. Once the server listens, `stop` drains instead.
  let stop = (signal: StopSignal): Promise<void> => {
    logger.info({ signal }, "stopped while starting");
    process.exit(SIGNAL_EXIT_CODES[signal]);
  };
  for (const signal of Object.keys(SIGNAL_EXIT_CODES) as StopSignal[]) process.on(signal, () => void stop(signal));
  let embedded: EmbeddedMongo | undefined;
  let uri = config.mongodbUri;
  if (!uri) {
    logger.info({ dataDir: config.dataDir }, "MONGODB_URI unset: starting embedded FerretDB (SQLite backend)");
    embedded = await startFerretdb({
      dir: path.join(config.dataDir, "ferretdb"),
      binary: config.ferretdbBin,
      niceness: BACKGROUND_NICENESS,
      onExit: (code, signal) => logger.error({ code, signal }, "embedded FerretDB exited; starting it again"),
    });
    uri = embedded.uri;
  }
  const db = await connectDatabase(uri).catch((err: unknown) => {
    // the driver's own words ("Invalid scheme…", "connect ECONNREFUSED…") do not say which setting was wrong
    throw config.mongodbUri ? new Error(`MONGODB_URI: cannot connect to the database: ${(err as Error).message}`) : err;
  });
  const app = await createApp({ config, db, logger });
  const server = app.createServer();
  const open = trackResponses(server);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await listen(server, config);
  logger.info({ url: config.publicUrl, port: config.port }, "AI gateway listening");

  let stopping = false;
  stop = async (signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    setTimeout(() => {
      logger.error(`shutdown took longer than ${SHUTDOWN_LIMIT_MS / 1000} s; exiting`);
      void (embedded?.stop() ?? Promise.resolve()).finally(() => process.exit(1));
    }, SHUTDOWN_LIMIT_MS).unref();
    // Background work (upstream pool, ledger flush) stops only once requests in flight are answered: stopped first,
    // it would cut those between two upstream calls (a Flux task being polled), and charge nothing for them.
    await drain(server, open, DRAIN_MS);
    await app.shutdown();
    await db.close();
    await embedded?.stop();
    process.exit(0);
  };
  // SIGHUP (the terminal closed): FerretDB runs in a process group of its own, so only the gateway hears it, and stops it
}
