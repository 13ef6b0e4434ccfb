// The one HTTP client every adapter uses. It owns keep-alive pools, timeouts, bounded retries and
// client-disconnect aborts, so adapters stay pure transforms of request and response bodies.
import { AppError, Cancellation, type CancelSignal } from "@gw/shared";
import { Agent, type Dispatcher, type FormData } from "undici";
import { dispatchTarget } from "./dispatch-target";
import { isRetryableStatus, backoffDelayMs, parseRetryAfterMs, type RetryPolicy } from "./retry-policy";
import { parseSse, type SseEvent } from "./sse";
import { markFailure } from "./failure-marks";
import { classifyTransportError } from "./transport-errors";

export interface UpstreamClientOptions {
  connectTimeoutMs: number;
  /** non-streamed calls: the whole call (all attempts, body included); streams: time to headers and longest silence */
  requestTimeoutMs: number;
  retry: RetryPolicy;
  /** sockets kept per upstream origin */
  connectionsPerOrigin?: number;
  /** the most bytes one answer's body (a stream's included) may have; unset: no limit */
  maxResponseBytes?: number;
}

export interface UpstreamCall {
  url: string;
  method?: "GET" | "POST";
  headers: Record<string, string>;
  body?: string | Buffer | FormData;
  signal: CancelSignal;
  /** the adapter's mapping of a non-2xx answer to an AppError */
  parseError: (status: number, body: string) => AppError;
  /** overrides requestTimeoutMs (health checks) */
  timeoutMs?: number;
  /** false: a single attempt */
  retry?: boolean;
  /**
   * GET calls that carry no credentials (a signed download URL): redirects followed, at most this many, to http(s)
   * URLs only. Default 0: a redirect is an answer like any non-2xx.
   */
  maxRedirects?: number;
  /**
   * streams: may a failed attempt still be repeated? The consumer knows when output reached its client; without
   * this, nothing is repeated once an event was handed out.
   */
  replayable?: () => boolean;
  /**
   * streams: reads an event by which a 2xx answer reports a failure (Anthropic's `error` event); the stream then
   * fails with its error, retried like the HTTP status it stands for while the call is replayable.
   */
  eventFailure?: (event: SseEvent) => StreamFailure | undefined;
  /**
   * streams: an event that only keeps the connection open (Anthropic's `ping`). It does not count as activity: a
   * stream that sends nothing else for the longest allowed silence has stalled, and times out like a silent one.
   */
  keepAlive?: (event: SseEvent) => boolean;
}

/** A failure a stream reported in one of its events, with the HTTP status it stands for (overloaded: 529). */
export class StreamFailure extends Error {
  constructor(readonly status: number, readonly error: AppError) {
    super(error.message);
    this.name = "StreamFailure";
  }
}

export interface UpstreamBytes {
  data: Buffer;
  contentType: string;
}

type Headers = Record<string, string | string[] | undefined>;

/** Retries left for one call, shared by every place that may repeat it. */
interface RetryBudget {
  retriesLeft: number;
  used: number;
}

interface Attempt {
  signal: CancelSignal;
  /** why the call was stopped, if it was */
  stopped(): "cancelled" | "timeout" | undefined;
  /** stops the call as timed out */
  expire(): void;
  /** milliseconds until the deadline (Infinity without one) */
  remainingMs(): number;
  dispose(): void;
}

export const cancelledError = () => new AppError("upstream_error", "The request was cancelled by the client.");
export const timeoutError = () => new AppError("upstream_timeout", "The upstream provider did not answer in time.");
const unreachableError = () => markFailure(new AppError("upstream_error", "The upstream provider could not be reached."), "connection");
const brokenOffError = () => markFailure(new AppError("upstream_error", "The upstream stream broke off before it finished."), "connection");
const answerBrokenOffError = () => markFailure(new AppError("upstream_error", "The upstream answer broke off before it finished."), "connection");
const tooLargeError = () => new AppError("upstream_error", "The upstream answer was larger than the gateway accepts.");

/** Is this the error thrown when the caller's signal fired? */
export const isCancelled = (err: unknown, signal: CancelSignal): boolean => signal.aborted && err instanceof AppError && err.code === "upstream_error";

export class UpstreamClient {
  private readonly agent: Agent;
  private readonly ownsAgent: boolean;
  private readonly options: UpstreamClientOptions;

  /** `agent`: another client's pool, shared (singleAttempt); that client closes it */
  constructor(options: UpstreamClientOptions, agent?: Agent) {
    this.options = options;
    this.ownsAgent = agent === undefined;
    // One Agent keeps one keep-alive pool per origin for the life of the gateway. The usual timeouts are the Agent's,
    // not each request's: with per-request timeout options a bare undici proxy promoted ~0.3 MB/s more to the old
    // generation at 1,000 requests/s (docs/performance.md).
    this.agent = agent ?? new Agent({
      headersTimeout: options.requestTimeoutMs,
      bodyTimeout: options.requestTimeoutMs,
      connect: { timeout: options.connectTimeoutMs },
      connections: options.connectionsPerOrigin ?? 256,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      // An upstream that sends without end would otherwise fill the heap until the process dies.
      maxResponseSize: options.maxResponseBytes ?? -1,
    });
  }

  /**
   * The same client (its pools, timeouts, limits) without retries: a routed call that has another deployment to go
   * to moves there at the first failure instead (CONTRACT 13). Closing this client closes nothing.
   */
  singleAttempt(): UpstreamClient {
    return new UpstreamClient({ ...this.options, retry: { ...this.options.retry, maxRetries: 0 } }, this.agent);
  }

  /** A JSON answer (2xx); invalid JSON is an upstream_error. */
  async json(call: UpstreamCall): Promise<unknown> {
    const text = await this.withDeadline(call, (attempt) => this.answer(call, attempt, (res) => res.body.text()));
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new AppError("upstream_error", "The upstream provider sent an invalid JSON answer.");
    }
  }

  /** A binary answer (audio, images). */
  async bytes(call: UpstreamCall): Promise<UpstreamBytes> {
    return this.withDeadline(call, (attempt) => this.answer(call, attempt, async (res) => ({
      data: Buffer.from(await res.body.arrayBuffer()),
      contentType: headerValue(res.headers, "content-type") ?? "application/octet-stream",
    })));
  }

  /**
   * Server-Sent Events of a 2xx answer. Failures may be retried while `call.replayable()` (default: until the first
   * event was handed out); after that nothing is repeated (the caller may already have forwarded it).
   */
  async *events(call: UpstreamCall): AsyncGenerator<SseEvent> {
    const budget = { retriesLeft: call.retry === false ? 0 : this.options.retry.maxRetries, used: 0 };
    let delivered = false;
    for (;;) {
      const attempt = this.startAttempt(call.signal, undefined);
      let res: Dispatcher.ResponseData | undefined;
      // The longest silence is timed here, not by the socket: keep-alive events (Anthropic's ping) and SSE comments
      // (`: keep-alive`) reset the socket's idle timeout, yet say nothing about the answer. Time spent waiting for the
      // consumer (a client reading slowly) is not the upstream's silence.
      let idle: NodeJS.Timeout | undefined;
      let consuming = false;
      const active = () => {
        if (idle) idle.refresh();
        else idle = setTimeout(() => (consuming ? idle?.refresh() : attempt.expire()), call.timeoutMs ?? this.options.requestTimeoutMs);
      };
      try {
        res = await this.send(call, attempt, budget);
        active();
        for await (const event of parseSse(res.body)) {
          const keepAlive = call.keepAlive?.(event) === true;
          const reported = call.eventFailure?.(event);
          if (reported) throw reported;
          delivered = true;
          consuming = true;
          yield event;
          consuming = false;
          // once per event, after it was handed on: a timer firing while the consumer held it only refreshed itself
          if (!keepAlive) active();
        }
        return;
      } catch (err) {
        const replayable = (call.replayable ? call.replayable() : !delivered) && budget.retriesLeft > 0 && !attempt.stopped();
        if (err instanceof StreamFailure) {
          // as if the answer had had that status (Anthropic's overloaded_error event is its 529)
          if (!replayable || !isRetryableStatus(err.status)) throw markFailure(err.error, err.status);
        } else {
          // Once the answer's headers arrived the provider was reached: a connection lost after that broke the stream.
          const failure = this.toAppError(err, attempt, res === undefined ? unreachableError : brokenOffError);
          if (!replayable || err instanceof AppError || classifyTransportError(err) !== "connection") throw failure;
        }
      } finally {
        // Stops the upstream transfer when the consumer leaves early (client gone, error downstream).
        if (res && !res.body.readableEnded) res.body.destroy();
        clearTimeout(idle);
        attempt.dispose();
      }
      budget.retriesLeft--;
      await sleep(backoffDelayMs(this.options.retry, budget.used++), call.signal).catch(() => { throw cancelledError(); });
    }
  }

  async close(): Promise<void> {
    if (this.ownsAgent) await this.agent.close();
  }

  /** Runs fn under one deadline covering every attempt of a non-streamed call. */
  private async withDeadline<T>(call: UpstreamCall, fn: (attempt: Attempt) => Promise<T>): Promise<T> {
    const attempt = this.startAttempt(call.signal, call.timeoutMs ?? this.options.requestTimeoutMs);
    try {
      return await fn(attempt);
    } catch (err) {
      throw this.toAppError(err, attempt);
    } finally {
      attempt.dispose();
    }
  }

  /**
   * Sends and reads a 2xx answer's body. The provider was reached, so a connection lost now broke the answer off;
   * nothing of it has reached the client yet, so it is retried like a connection lost before the answer.
   */
  private async answer<T>(call: UpstreamCall, attempt: Attempt, read: (res: Dispatcher.ResponseData) => Promise<T>): Promise<T> {
    const budget = this.budget(call);
    for (;;) {
      const res = await this.send(call, attempt, budget);
      try {
        return await read(res);
      } catch (err) {
        if (attempt.stopped() || budget.retriesLeft <= 0 || classifyTransportError(err) !== "connection") throw this.toAppError(err, attempt, answerBrokenOffError);
        budget.retriesLeft--;
        await sleep(backoffDelayMs(this.options.retry, budget.used++), attempt.signal);
      }
    }
  }

  private budget(call: UpstreamCall): RetryBudget {
    return { retriesLeft: call.retry === false ? 0 : this.options.retry.maxRetries, used: 0 };
  }

  /** Dispatches with retries until a 2xx answer; non-2xx answers go through the adapter's parseError. */
  private async send(call: UpstreamCall, attempt: Attempt, budget: RetryBudget): Promise<Dispatcher.ResponseData> {
    // Non-streamed calls are bounded by withDeadline's timer; the socket-level timeouts only matter for streams
    // (time to headers, longest silence) and for calls with their own timeout.
    const timeouts = call.timeoutMs === undefined ? undefined : { headersTimeout: call.timeoutMs, bodyTimeout: call.timeoutMs };
    let url = call.url;
    let redirectsLeft = call.maxRedirects ?? 0;
    for (;;) {
      let res: Dispatcher.ResponseData;
      try {
        const { origin, path } = dispatchTarget(url);
        res = await this.agent.request({
          origin,
          path,
          method: call.method ?? "POST",
          headers: call.headers,
          body: call.body,
          // undici takes any EventTarget-like signal (aborted, reason, add/removeEventListener)
          signal: attempt.signal as AbortSignal,
          ...timeouts,
        });
      } catch (err) {
        if (attempt.stopped() || budget.retriesLeft <= 0 || classifyTransportError(err) !== "connection") throw err;
        budget.retriesLeft--;
        await sleep(backoffDelayMs(this.options.retry, budget.used++), attempt.signal);
        continue;
      }
      if (res.statusCode >= 200 && res.statusCode < 300) return res;
      const next = redirectsLeft > 0 ? redirectTarget(res, url) : undefined;
      if (next !== undefined) {
        await res.body.dump().catch(() => undefined);
        url = next;
        redirectsLeft--;
        continue;
      }
      const text = await res.body.text().catch(() => "");
      if (budget.retriesLeft > 0 && isRetryableStatus(res.statusCode)) {
        const retryAfter = parseRetryAfterMs(res.headers["retry-after"], Date.now());
        const waitMs = retryAfter ?? backoffDelayMs(this.options.retry, budget.used);
        // A wait the deadline would cut short ends only in a timeout: the upstream's own refusal is the truer answer.
        if ((retryAfter === undefined || retryAfter <= this.options.retry.maxRetryAfterMs) && waitMs < attempt.remainingMs()) {
          budget.retriesLeft--;
          if (retryAfter === undefined) budget.used++;
          await sleep(waitMs, attempt.signal);
          continue;
        }
      }
      const err = withRetryAfter(call.parseError(res.statusCode, text), res.statusCode, res.headers["retry-after"]);
      // A 404 to a GET (a Flux poll or sample, the voices list) is a missing resource; only a call that names a model
      // (every POST) reads it as a model name the upstream does not know.
      throw res.statusCode === 404 && call.method === "GET" ? err : markFailure(err, res.statusCode);
    }
  }

  /** One cancellation per call: fires on the caller's signal or the deadline, and says which. */
  private startAttempt(callerSignal: CancelSignal, deadlineMs: number | undefined): Attempt {
    const controller = new Cancellation();
    let timedOut = false;
    const deadlineAt = deadlineMs === undefined ? Infinity : performance.now() + deadlineMs;
    const unlink = controller.follow(callerSignal);
    const timer = deadlineMs === undefined ? undefined : setTimeout(() => {
      if (!controller.aborted) timedOut = true;
      controller.abort();
    }, deadlineMs);
    return {
      signal: controller,
      stopped: () => (timedOut ? "timeout" : controller.aborted ? "cancelled" : undefined),
      expire: () => {
        if (!controller.aborted) timedOut = true;
        controller.abort();
      },
      remainingMs: () => deadlineAt - performance.now(),
      dispose: () => {
        if (timer) clearTimeout(timer);
        unlink();
      },
    };
  }

  /** `connectionLost` names a connection failure: unreachable by default, broken off once an answer began. */
  private toAppError(err: unknown, attempt: Attempt, connectionLost: () => AppError = unreachableError): AppError {
    const stopped = attempt.stopped();
    if (stopped === "cancelled") return cancelledError();
    if (stopped === "timeout") return timeoutError();
    if (err instanceof AppError) return err;
    const kind = classifyTransportError(err);
    if (kind === "timeout") return timeoutError();
    if (kind === "connection") return connectionLost();
    if (kind === "too-large") return tooLargeError();
    return new AppError("upstream_error", "The upstream provider sent an unreadable answer.");
  }
}

/**
 * An upstream refusal that said when to come back (429/503 with Retry-After) keeps that hint in our 502: the gateway
 * gave up on it (the wait was too long, or its retries were spent), and the OpenAI SDKs retry a 502 at once unless
 * told to wait, which would only meet the same refusal.
 */
function withRetryAfter(err: AppError, status: number, header: string | string[] | undefined): AppError {
  if (err.code !== "upstream_error" || !isRetryableStatus(status)) return err;
  const ms = parseRetryAfterMs(header, Date.now());
  if (ms === undefined) return err;
  return new AppError(err.code, err.message, { ...err.extras, retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) });
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Where a redirect answer points, resolved against the URL asked; only http(s) targets are followed. */
function redirectTarget(res: Dispatcher.ResponseData, from: string): string | undefined {
  const location = REDIRECT_STATUSES.has(res.statusCode) ? headerValue(res.headers, "location") : undefined;
  if (location === undefined) return undefined;
  try {
    const target = new URL(location, from);
    return target.protocol === "http:" || target.protocol === "https:" ? target.href : undefined;
  } catch {
    return undefined;
  }
}

function headerValue(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** setTimeout that gives up (rejecting) when the signal fires. */
export function sleep(ms: number, signal: CancelSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => { signal.removeEventListener("abort", onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(timer); reject(signal.reason); };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
