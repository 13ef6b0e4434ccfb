import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Logger } from "pino";
import { inject } from "vitest";
import { loadConfig, type Config } from "@gw/config";
import { connectDatabase, type Database } from "@gw/db";
import { ManualClock, randomBase62 } from "@gw/shared";
import { createApp, type App } from "../src/app";

export interface TestServer {
  url: string;
  config: Config;
  db: Database;
  app: App;
  clock: ManualClock;
  /** the mail outbox directory (SMTP_URL unset) */
  outboxDir: string;
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  config?: Partial<Config>;
  /** share a database with another test server (two-instance tests) */
  databaseName?: string;
  /** the server's logger (default: the app's own, silent in tests) */
  logger?: Logger;
}

/** Starts the real app on a free port against a fresh database on the run's FerretDB. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gw-test-data-"));
  const dbName = options.databaseName ?? `t_${randomBase62(12)}`;
  const mongoUri = inject("mongoUri").replace(/\/[^/]*$/, `/${dbName}`);
  const config = loadConfig(
    {
      NODE_ENV: "test",
      DATA_DIR: dataDir,
      MONGODB_URI: mongoUri,
      SESSION_SECRET: "test-secret-test-secret-test-secret-0123",
      COOKIE_SECURE: "false",
      STRIPE_SECRET_KEY: "sk_test_123",
      STRIPE_PUBLISHABLE_KEY: "pk_test_123",
      STRIPE_WEBHOOK_SECRET: "whsec_test_secret",
      STRIPE_API_BASE: inject("stripeMockUrl"),
      // the Checkout return addresses the tests use
      CHECKOUT_ALLOWED_ORIGINS: "https://example.com",
      ...options.env,
    },
    options.config,
  );
  const db = await connectDatabase(mongoUri);
  const clock = new ManualClock(Date.now());
  const app = await createApp({ config, db, clock, logger: options.logger });
  const server: Server = app.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    config: { ...config, publicUrl: config.publicUrl },
    db,
    app,
    clock,
    outboxDir: path.join(dataDir, "outbox"),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.shutdown();
      await db.close();
      // Every server gets a fresh data dir; remove it so repeated runs don't pile up in the temp dir.
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
