import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { LedgerStats } from "@gw/billing";

/** Request latencies: from a cached refusal (milliseconds) to a long image or stream (minutes). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Ledger flushes: one batched write per user, usually milliseconds. */
const FLUSH_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** `2xx` … `5xx`: the status label of the HTTP series (a bounded set, whatever the status). */
const statusClass = (status: number): string => `${Math.trunc(status / 100)}xx`;

/** What one request was charged, as its usage record says. */
export interface ChargedUsage {
  model: string;
  promptTokens?: number;
  completionTokens?: number;
}

/**
 * Every Prometheus series of the gateway (docs/observability.md), in one registry per app. Labels are bounded sets:
 * route templates, configured model ids, provider names, deployment ids, outcomes, error codes; never a user or a key.
 */
export class GatewayMetrics {
  readonly registry = new Registry();

  private readonly httpRequests = new Counter({
    name: "gateway_http_requests_total", help: "HTTP requests answered, by route template, method and status class.",
    labelNames: ["route", "method", "status_class"] as const, registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: "gateway_http_request_duration_seconds", help: "Time from a request's arrival until its answer ended, by route template, method and status class.",
    labelNames: ["route", "method", "status_class"] as const, buckets: LATENCY_BUCKETS, registers: [this.registry],
  });
  private readonly gatewayRequests = new Counter({
    name: "gateway_requests_total", help: "Gateway (model route) requests by model, endpoint and outcome.",
    labelNames: ["model", "endpoint", "outcome"] as const, registers: [this.registry],
  });
  private readonly upstreamDuration = new Histogram({
    name: "gateway_upstream_request_duration_seconds", help: "Upstream calls (one per attempt at a deployment), by provider, deployment and outcome.",
    labelNames: ["provider", "deployment", "outcome"] as const, buckets: LATENCY_BUCKETS, registers: [this.registry],
  });
  private readonly upstreamErrors = new Counter({
    name: "gateway_upstream_errors_total", help: "Failed upstream calls by provider, deployment and reason (the error code answered).",
    labelNames: ["provider", "deployment", "reason"] as const, registers: [this.registry],
  });
  private readonly promptTokens = new Counter({
    name: "gateway_prompt_tokens_total", help: "Prompt tokens charged, by model.", labelNames: ["model"] as const, registers: [this.registry],
  });
  private readonly completionTokens = new Counter({
    name: "gateway_completion_tokens_total", help: "Completion tokens charged, by model.", labelNames: ["model"] as const, registers: [this.registry],
  });
  private readonly charged = new Counter({
    name: "gateway_charged_microdollars_total", help: "Credits charged (micro-dollars, 1e-6 USD), by model.", labelNames: ["model"] as const, registers: [this.registry],
  });
  private readonly limitRefusals = new Counter({
    name: "gateway_limit_refusals_total", help: "Gateway requests refused by a limit, by reason (the error code answered).",
    labelNames: ["reason"] as const, registers: [this.registry],
  });
  private readonly ledgerFlush = new Histogram({
    name: "gateway_ledger_flush_duration_seconds", help: "Ledger flushes that wrote settled charges: how long each took.",
    buckets: FLUSH_BUCKETS, registers: [this.registry],
  });

  /** `processMetrics`: Node's process series too (their collectors, an event loop monitor among them, then run) */
  constructor(ledgerStats: () => LedgerStats, processMetrics: boolean) {
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
    // Read on a scrape (a walk over the instance's reservations), never per request.
    const read = (key: keyof LedgerStats) => function (this: Gauge) {
      this.set(ledgerStats()[key]);
    };
    new Gauge({ name: "gateway_ledger_queued_entries", help: "Settled charges waiting for the next ledger flush.", registers: [this.registry], collect: read("queuedEntries") });
    new Gauge({ name: "gateway_ledger_open_holds", help: "Holds open: requests between their hold and their settle or release.", registers: [this.registry], collect: read("openHolds") });
    new Gauge({ name: "gateway_ledger_reserved_microdollars", help: "Credits this instance reserved from the stored balances (micro-dollars).", registers: [this.registry], collect: read("reservedMicros") });
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    const labels = { route, method, status_class: statusClass(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  gatewayRequest(model: string, endpoint: string, outcome: string): void {
    this.gatewayRequests.inc({ model, endpoint, outcome });
  }

  /**
   * One upstream call; `errorCode` when it failed (the AppError code it ended with), `client_gone` when it was cut
   * because its client left (outcome `cancelled`, not an upstream error).
   */
  upstreamCall(provider: string, deployment: string, seconds: number, errorCode?: string): void {
    const outcome = errorCode === undefined ? "success" : errorCode === "client_gone" ? "cancelled" : "error";
    this.upstreamDuration.observe({ provider, deployment, outcome }, seconds);
    if (outcome === "error" && errorCode !== undefined) this.upstreamErrors.inc({ provider, deployment, reason: errorCode });
  }

  charge(usage: ChargedUsage, micros: number): void {
    const labels = { model: usage.model };
    if (usage.promptTokens) this.promptTokens.inc(labels, usage.promptTokens);
    if (usage.completionTokens) this.completionTokens.inc(labels, usage.completionTokens);
    this.charged.inc(labels, micros);
  }

  limitRefused(reason: string): void {
    this.limitRefusals.inc({ reason });
  }

  ledgerFlushed(seconds: number): void {
    this.ledgerFlush.observe(seconds);
  }
}
