import { context, ROOT_CONTEXT, SpanStatusCode, trace, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { toAppError } from "@gw/shared";
import type { Response } from "express";
import type { ChargedUsage, GatewayMetrics } from "./metrics";

/** The series a request's observation records into. */
export type ObservationSink = Pick<GatewayMetrics, "upstreamCall" | "charge">;

/** The deployment label until a model has several (routing passes its own deployment id). */
export const DEFAULT_DEPLOYMENT = "default";

/** The "error" of an upstream call cut because its client left: the upstream series count it apart. */
export const CLIENT_GONE = "client_gone";

/** The steps of a gateway request that get a span of their own (CONTRACT 14). */
export type StepName = "key_check" | "limits" | "hold" | "settle";

/** What the access log line and the gateway series read of one request's charge. */
export interface ObservedUsage extends ChargedUsage {
  characters?: number;
  audioSeconds?: number;
  images?: number;
  status?: string;
}

/**
 * One request as the observability sees it: the facts the pipeline reports (the usage charged, the upstream time) and,
 * when tracing is on, its root span. With tracing off no span, context or closure is made: `step` hands back the
 * promise it was given.
 */
export class RequestObservation {
  /** the usage record settled, and what it was charged (micro-dollars) */
  usage: ObservedUsage | undefined;
  cost: number | undefined;
  /** time spent waiting for upstreams (all attempts), milliseconds */
  upstreamMs: number | undefined;
  /** the root span's context: the parent of every step (only when tracing) */
  private readonly parent: Context | undefined;

  constructor(
    private readonly metrics: ObservationSink,
    private readonly providerOf: (model: string) => string,
    private readonly tracer: Tracer | undefined,
    readonly span: Span | undefined,
    /** the answer: a call that failed because its client left is no upstream error */
    private readonly res?: Pick<Response, "destroyed" | "writableFinished">,
  ) {
    this.parent = span ? trace.setSpan(ROOT_CONTEXT, span) : undefined;
  }

  /**
   * The settle under way, if any: a stream settles after its last byte was sent, so its answer may close before
   * the charge is known; the access log line waits for it.
   */
  settling: Promise<unknown> | undefined;
  /**
   * A hold is open, its upstream called: a charge (`charged`) or a release (`released`) follows. An answer that
   * closes meanwhile (its client left) waits for it: `whenClosed` is told then.
   */
  charging = false;
  whenClosed: (() => void) | undefined;

  /** `work` (already started) timed as one step's span when tracing; returned as it is when not. */
  step<T>(name: StepName, work: Promise<T>): Promise<T> {
    const stepped = this.tracer ? traced(this.tracer.startSpan(`gateway.${name}`, undefined, this.parent), work) : work;
    if (name === "settle") this.settling = stepped;
    return stepped;
  }

  /**
   * One upstream attempt at a deployment of the model (a stream's ends when its last event was read):
   * `upstreamStarted` returns its start, `upstreamEnded` (given that start and the failure, if any) records it in the
   * upstream series and, when tracing, as a span. Routing passes the deployment it chose.
   */
  upstreamStarted(): number {
    this.charging = true;
    return performance.now();
  }

  /** The hold was given back: nothing is charged. */
  released(): void {
    this.closeCharge();
  }

  private closeCharge(): void {
    this.charging = false;
    const told = this.whenClosed;
    this.whenClosed = undefined;
    told?.();
  }

  upstreamEnded(model: string, startedAt: number, err?: unknown, deployment: string = DEFAULT_DEPLOYMENT): void {
    const ms = performance.now() - startedAt;
    this.upstreamMs = (this.upstreamMs ?? 0) + ms;
    const provider = this.providerOf(model);
    const errorCode = err === undefined ? undefined : this.clientGone() ? CLIENT_GONE : toAppError(err).code;
    this.metrics.upstreamCall(provider, deployment, ms / 1000, errorCode);
    if (!this.tracer) return;
    const span = this.tracer.startSpan("gateway.upstream", {
      startTime: performance.timeOrigin + startedAt,
      attributes: { "gateway.provider": provider, "gateway.deployment": deployment, "gateway.model": model },
    }, this.parent);
    endSpan(span, err);
  }

  private clientGone(): boolean {
    return this.res !== undefined && this.res.destroyed && !this.res.writableFinished;
  }

  /** Notes what the settle of `usage` charged (micro-dollars): the tokens and money series, the access log line. */
  charged(usage: ObservedUsage, micros: number): void {
    this.usage = usage;
    this.cost = micros;
    this.metrics.charge(usage, micros);
    this.closeCharge();
  }

  /** Runs `fn` with this request's span active (log lines then carry its trace id). */
  inContext<T>(fn: () => T): T {
    return this.parent ? context.with(this.parent, fn) : fn();
  }
}

function endSpan(span: Span, err?: unknown): void {
  if (err !== undefined) {
    const appError = toAppError(err);
    span.setStatus({ code: SpanStatusCode.ERROR, message: appError.code });
    span.setAttribute("gateway.error_code", appError.code);
  }
  span.end();
}

function traced<T>(span: Span, work: Promise<T>): Promise<T> {
  return work.then((value) => {
    endSpan(span);
    return value;
  }, (err: unknown) => {
    endSpan(span, err);
    throw err;
  });
}

/** Where a response no observation was made for (a handler chain built by hand) reports: nowhere. */
const DETACHED = new RequestObservation({ upstreamCall: () => undefined, charge: () => undefined }, () => "unknown", undefined, undefined);

/** The request's observation (made first thing by `observeRequests`). */
export function observationOf(res: Response): RequestObservation {
  return (res.locals as { observation?: RequestObservation }).observation ?? DETACHED;
}
