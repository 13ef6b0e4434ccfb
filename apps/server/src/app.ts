import { createServer, type Server } from "node:http";
import express, { type Express, type RequestHandler } from "express";
import type { Config } from "@gw/config";
import type { Database } from "@gw/db";
import { systemClock, type Clock } from "@gw/shared";
import type { Logger } from "pino";
import type { AppContext } from "./context";
import { onClientError, onUnsupportedExpectation, requireHost } from "./http/client-error";
import { continueOnRead } from "./http/expect-continue";
import { errorHandler, notFound } from "./http/errors";
import { DirectRoutes } from "./http/direct-routes";
import { createLogger } from "./http/logger";
import { requestId } from "./http/request-id";
import { strictTransportSecurity } from "./http/strict-transport";
import { Telemetry } from "./observability/telemetry";
import { createServices } from "./services";
import { methodRules } from "./api/method-not-allowed";
import { mountApi } from "./api/mount";
import { openApiDocument } from "./api/openapi-document";
import { mountBilling } from "./billing/mount";
import { mountGateway } from "./gateway/mount";
import { mountWeb } from "./web/mount";

export interface CreateAppOptions {
  config: Config;
  db: Database;
  clock?: Clock;
  logger?: Logger;
}

export interface App {
  express: Express;
  /** a (not yet listening) HTTP server running the gateway's hot routes directly and everything else through `express` */
  createServer(): Server;
  context: AppContext;
  /** stops background work and flushes queued writes (usage records, key stats) */
  shutdown(): Promise<void>;
}

const noSniff: RequestHandler = (_req, res, next) => {
  res.setHeader("X-Content-Type-Options", "nosniff");
  next();
};

/** Builds the HTTP application without listening, so tests and main.ts share it. */
export async function createApp(options: CreateAppOptions): Promise<App> {
  const shutdownHooks: Array<() => Promise<void> | void> = [];
  // read on a scrape only, once the services below exist
  const telemetry = await Telemetry.create(options.config, () => context.ledger.stats());
  // stopped last: spans of the requests drained before are exported
  shutdownHooks.push(() => telemetry.shutdown());
  const context: AppContext = await createServices({
    // this instance's own copy: its catalog (models, plans, credit packages) follows the database's
    config: { ...options.config },
    db: options.db,
    clock: options.clock ?? systemClock,
    logger: options.logger ?? createLogger(options.config.logLevel, telemetry.tracing !== undefined),
    onShutdown: (fn) => shutdownHooks.push(fn),
  }, { onLedgerFlush: (seconds) => telemetry.metrics.ledgerFlushed(seconds) });
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", context.config.trustProxy);
  app.set("etag", false);
  const hsts = strictTransportSecurity(context.config);
  const common: RequestHandler[] = [telemetry.observeRequests(context.logger), requestId, noSniff, ...(hsts ? [hsts] : [])];
  app.use(common);
  const direct = new DirectRoutes();
  app.get("/metrics", telemetry.metricsRoute());

  // Order matters: the webhook needs the raw body, so it is mounted before any JSON parser.
  await mountBilling(app, context);
  const document = openApiDocument(context.config.publicUrl);
  const methods = methodRules(document);
  await mountGateway(app, context, direct, methods);
  await mountApi(app, context, document, methods);
  await mountWeb(app, context);

  const onError = errorHandler(context.logger, { debug: context.config.errorDebug });
  app.use(notFound);
  app.use(onError);

  return {
    express: app,
    createServer() {
      const routes = direct.server(app, { before: common, notFound, onError });
      const listener = requireHost(routes.listener);
      // Errors Node answers itself, before the app sees a request, in the spec's error shape as well.
      return createServer({ ...routes.options, requireHostHeader: false }, listener)
        .on("clientError", onClientError)
        .on("checkContinue", continueOnRead(listener))
        .on("checkExpectation", onUnsupportedExpectation);
    },
    context,
    async shutdown() {
      for (const hook of shutdownHooks.reverse()) await hook();
    },
  };
}
