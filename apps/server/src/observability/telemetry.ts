import { createHash, timingSafeEqual } from "node:crypto";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { Request, RequestHandler, Response } from "express";
import type { Config } from "@gw/config";
import type { LedgerStats } from "@gw/billing";
import { AppError, bearerToken } from "@gw/shared";
import type { Logger } from "pino";
import { accessLogLine, gatewayOutcome } from "./access-log";
import { GatewayMetrics } from "./metrics";
import { RequestObservation } from "./request-observation";
import { startTracing, type Tracing } from "./tracing";

/** How long an access log line waits for the charge of a request whose client left mid-call. */
const CHARGE_WAIT_MS = 30_000;

/** Statuses of a limit's refusal: 402 (credits, a key's spend limit) and 429 (requests per minute, concurrency). */
const LIMIT_STATUSES = new Set([402, 429]);

/**
 * The route a request reached, as a bounded label: a gateway route's own path, an Express route's template, else
 * `other` (static files, tRPC, paths that match nothing).
 */
function routeOf(req: Request, res: Response): string {
  const endpoint = res.locals.endpoint as unknown;
  if (typeof endpoint === "string") return endpoint;
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === "string" ? req.baseUrl + path : "other";
}

/** Equal secrets, compared in constant time whatever their lengths. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * The app's observability (CONTRACT 14): its Prometheus series, its tracer when OTEL_EXPORTER_OTLP_ENDPOINT is set,
 * and the middleware that observes every request (HTTP series, root span, the gateway's access log line).
 */
export class Telemetry {
  readonly metrics: GatewayMetrics;
  private readonly providers: Map<string, string>;
  private readonly models: Set<string>;

  private constructor(private readonly config: Config, ledgerStats: () => LedgerStats, readonly tracing: Tracing | undefined) {
    // no one can read them without the route
    this.metrics = new GatewayMetrics(ledgerStats, config.observability.metricsToken !== undefined);
    this.providers = new Map(config.models.map((m) => [m.id, m.provider]));
    this.models = new Set(config.models.map((m) => m.id));
  }

  /** Starts tracing only when configured: without an OTLP endpoint the OpenTelemetry SDK is never loaded. */
  static async create(config: Config, ledgerStats: () => LedgerStats): Promise<Telemetry> {
    const otlp = config.observability.otlp;
    return new Telemetry(config, ledgerStats, otlp ? await startTracing(otlp) : undefined);
  }

  async shutdown(): Promise<void> {
    await this.tracing?.shutdown();
  }

  /**
   * First on every request: its observation (res.locals.observation), its root span when tracing, and on close its
   * HTTP series and, for a gateway route (res.locals.endpoint set), the gateway series and the access log line.
   */
  observeRequests(logger: Logger): RequestHandler {
    const tracer = this.tracing?.tracer;
    const providerOf = (model: string) => this.providers.get(model) ?? "unknown";
    return (req, res, next) => {
      const startedAt = performance.now();
      const span = tracer?.startSpan(req.method, { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method } }, ROOT_CONTEXT);
      const observation = new RequestObservation(this.metrics, providerOf, tracer, span, res);
      res.locals.observation = observation;
      res.once("close", () => {
        // observing must never take the server down: a fault here is logged, the request is long answered
        try {
          this.finish(logger, req, res, observation, startedAt);
        } catch (err) {
          logger.warn({ err: (err as Error).message, requestId: res.locals.requestId }, "observing a request failed");
        }
      });
      observation.inContext(next);
    };
  }

  private finish(logger: Logger, req: Request, res: Response, observation: RequestObservation, startedAt: number): void {
    const latencyMs = performance.now() - startedAt;
    // A client that left before any answer was sent: nginx's 499, not the 200 Node keeps as a default.
    const status = res.headersSent ? res.statusCode : 499;
    const route = routeOf(req, res);
    this.metrics.httpRequest(route, req.method, status, latencyMs / 1000);
    const span = observation.span;
    if (span) {
      span.updateName(`${req.method} ${route}`);
      span.setAttributes({ "http.route": route, "http.response.status_code": status });
      // OpenTelemetry's HTTP server convention: only a 5xx is the server's error
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    }
    if (typeof res.locals.endpoint !== "string") {
      span?.end();
      return;
    }
    const gatewayDone = () => {
      const line = accessLogLine(req, res, observation, { status, latencyMs, knownModels: this.models });
      this.metrics.gatewayRequest(line.model, line.endpoint, gatewayOutcome(status, line));
      if (LIMIT_STATUSES.has(status) && line.errorCode) this.metrics.limitRefused(line.errorCode);
      if (span) {
        // the line carries the request's trace id
        observation.inContext(() => logger.info(line, "gateway request"));
        span.setAttributes({ "gateway.request_id": line.requestId, "gateway.endpoint": line.endpoint, "gateway.model": line.model });
        if (line.errorCode) span.setAttribute("gateway.error_code", line.errorCode);
        span.end();
      } else logger.info(line, "gateway request");
    };
    // registered after the handler's own wait for the settle: the charge is noted by the time this runs
    if (observation.settling) {
      observation.settling.then(gatewayDone, gatewayDone)
        .catch((err: unknown) => logger.warn({ err: (err as Error).message, requestId: res.locals.requestId }, "observing a request failed"));
    }
    else if (observation.charging) this.afterCharge(observation, gatewayDone);
    else gatewayDone();
  }

  /**
   * An answer closed while its request still holds credits (the client left mid-call): the line waits for the charge
   * or the release that follows, so that it says what was charged. Bounded, so that a charge that never comes (its
   * settle failed) still leaves the line.
   */
  private afterCharge(observation: RequestObservation, done: () => void): void {
    let logged = false;
    const once = () => {
      if (logged) return;
      logged = true;
      clearTimeout(timer);
      done();
    };
    const timer = setTimeout(once, CHARGE_WAIT_MS).unref();
    observation.whenClosed = once;
  }

  /**
   * GET /metrics: the Prometheus text format for a request bearing METRICS_TOKEN; 401 without it, and 404 (as for any
   * unknown path) when no token is configured.
   */
  metricsRoute(): RequestHandler {
    const token = this.config.observability.metricsToken;
    return async (req, res) => {
      if (token === undefined) throw new AppError("not_found", `No route for ${req.method} ${req.path}.`);
      const given = bearerToken(req.get("authorization") ?? "");
      if (given === undefined || !sameSecret(given, token)) {
        throw new AppError("unauthorized", "Send the metrics token: 'Authorization: Bearer <METRICS_TOKEN>'.", { headers: { "WWW-Authenticate": "Bearer" } });
      }
      const text = await this.metrics.registry.metrics();
      res.setHeader("Content-Type", this.metrics.registry.contentType);
      res.setHeader("Cache-Control", "no-store");
      res.end(text);
    };
  }
}
