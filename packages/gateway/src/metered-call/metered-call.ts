import type { Ledger } from "@gw/billing";
import type { ProviderGateway, Served } from "@gw/providers";
import type { CancelSignal } from "@gw/shared";
import type { Logger } from "pino";
import { CreditHold, type KeyBudget } from "./credit-hold";

/**
 * What a metered call reports as it goes (metrics, spans, the access log line). `step` times a hold or a settle;
 * `upstreamStarted`/`upstreamEnded` an upstream attempt; `charged` or `released` closes the call's money.
 */
export interface CallObservation<R> {
  step<T>(name: "hold" | "settle", work: Promise<T>): Promise<T>;
  upstreamStarted(): number;
  upstreamEnded(model: string, startedAt: number, err?: unknown, deployment?: string): void;
  charged(record: R, micros: number): void;
  released(): void;
}

/** A request's usage record, stored with its charge in the ledger entry. */
export type UsageRecord = Record<string, unknown>;

/** The request a call is metered for: whose credits (and key limit) it holds, and where it reports. */
export interface MeteredRequest<R> {
  userId: string;
  requestId: string;
  endpoint: string;
  /** the key's spend limit, when it has one: the hold counts against it too */
  keyBudget?: KeyBudget;
  /** aborted when the client goes away before the answer is complete */
  signal: CancelSignal;
  observation: CallObservation<R>;
}

/**
 * What the pipeline needs, built once per app: the ledger, a logger, the tokenizer and fallback chains (a stream's),
 * and how a request's usage (`F`, what the call knows of it) becomes the usage record (`R`) stored with the charge.
 */
export interface MeteringDeps<Req, F, R> {
  ledger: Ledger;
  logger: Pick<Logger, "error" | "info">;
  providers: Pick<ProviderGateway, "countTokens" | "modelChain">;
  /** how long a client may go without reading a stream (as long as the upstream may go without sending) */
  stalledClientMs(): number;
  usageRecord(request: Req, fields: F): R;
}

/** One non-streamed call: what it holds, the upstream call, and how its answer is priced and recorded. */
export interface PlainCall<T, F> {
  /** micro-dollars held before the upstream call */
  worstCase: number;
  /** the model asked for */
  model: string;
  run(): Promise<T>;
  /** the real cost of the answer; throwing here (a wrong answer) releases the hold */
  costOf(result: T): number;
  usageOf(result: T): F;
}

/** The metered-call pipeline of an app: every model call's hold → upstream → settle (or release). */
export class Metering<Req extends MeteredRequest<R>, F, R extends UsageRecord> {
  constructor(readonly deps: MeteringDeps<Req, F, R>) {}

  /** Step 1: holds `worstCase` micro-dollars (of the key's limit, then the credits): 402 when either falls short. */
  async open(request: Req, worstCase: number, holdMeta: Record<string, unknown>): Promise<MeteredCall<Req, F, R>> {
    const hold = await request.observation.step("hold", CreditHold.open(this.deps.ledger, request.userId, worstCase, holdMeta, request.keyBudget));
    return new MeteredCall(this.deps, request, hold);
  }

  /** One non-streamed call: hold the worst case, call upstream, settle to the real cost; any failure releases the hold. */
  async call<T>(request: Req, call: PlainCall<T, F>): Promise<{ result: T; cost: number }> {
    const metered = await this.open(request, call.worstCase, { requestId: request.requestId, model: call.model, endpoint: request.endpoint });
    const observation = request.observation;
    let result: T;
    let cost: number;
    let usage: F;
    let upstreamAt: number | undefined = observation.upstreamStarted();
    try {
      result = await call.run();
      // the deployment that answered (CONTRACT 13), when the call went through the router
      const served = (result as { served?: Served } | null)?.served;
      observation.upstreamEnded(served?.model.id ?? call.model, upstreamAt, undefined, served?.deploymentId);
      upstreamAt = undefined;
      cost = call.costOf(result);
      usage = call.usageOf(result);
    } catch (err) {
      if (upstreamAt !== undefined) observation.upstreamEnded(call.model, upstreamAt, err);
      await metered.release();
      throw err;
    }
    return { result, cost: await metered.settle(cost, usage) };
  }
}

/**
 * One call's money (CONTRACT 6): opened with a hold of the worst case (Metering.open), then closed exactly once:
 * settled to the real cost with the request's usage record, or released when the call produced nothing (a failed
 * call costs nothing).
 */
export class MeteredCall<Req extends MeteredRequest<R>, F, R extends UsageRecord> {
  constructor(
    private readonly deps: MeteringDeps<Req, F, R>,
    private readonly request: Req,
    private readonly hold: CreditHold,
  ) {}

  /** Step 3: charges `cost` with the usage record of `fields`; returns what was charged. */
  async settle(cost: number, fields: F): Promise<number> {
    const record = this.deps.usageRecord(this.request, fields);
    const charged = await this.request.observation.step("settle", this.hold.settle(cost, record));
    this.request.observation.charged(record, charged);
    return charged;
  }

  /** Or: gives the hold back. */
  async release(): Promise<void> {
    await this.hold.release().catch((releaseErr: unknown) => {
      // The hold expires on its own (HOLD_TTL_SECONDS); the client still gets the real error.
      this.deps.logger.error({ err: (releaseErr as Error).message, holdId: this.hold.holdId }, "hold release failed");
    });
    this.request.observation.released();
  }

  /** See CreditHold.cover: called before `quote` when the charge is reported before the settle. */
  cover(cost: number): Promise<void> {
    return this.hold.cover(cost);
  }

  /** What `settle(cost)` would charge now (CreditHold.quote). */
  quote(cost: number): number {
    return this.hold.quote(cost);
  }
}
