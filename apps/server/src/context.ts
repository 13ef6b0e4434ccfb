import type { Config } from "@gw/config";
import type { Database } from "@gw/db";
import type { Clock } from "@gw/shared";
import type { Logger } from "pino";

/**
 * Everything a request handler may need, built once per app instance (tests build several per process).
 * Feature modules add their services here; handlers never reach into models directly.
 */
export interface AppContext {
  config: Config;
  db: Database;
  clock: Clock;
  logger: Logger;
  /** background work (flushers, sweepers) registered here is stopped and drained on shutdown */
  onShutdown: (fn: () => Promise<void> | void) => void;
}
