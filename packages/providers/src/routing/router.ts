// CONTRACT 13: which upstream serves a call. Each model has deployments (its own list, else one from its
// provider's environment); a call goes to one chosen by weight among the healthy ones, and on a 429, 5xx, timeout
// or connection error that one cools down and the next is tried, then the model's fallbacks in order. A stream is
// only moved before its first event reached the caller; after that nothing is sent upstream again.
import type { Config, DeploymentDefinition, ModelDefinition } from "@gw/config";
import { AppError, type CancelSignal, type Clock } from "@gw/shared";
import { baseUrlOf, createEndpointResolver, upstreamModelName, type Endpoint, type EndpointResolver } from "../endpoint";
import { failureCause } from "../http/failure-marks";
import type { ChatStreamEvent, DeploymentState, Served, UpstreamAttempt } from "../types";
import { DeploymentHealth } from "./deployment-health";
import { chooseWeighted, type Random } from "./weighted-choice";

/** The id of the one deployment a model without a `deployments` list has. */
export const DEFAULT_DEPLOYMENT_ID = "default";

interface Deployment {
  id: string;
  weight: number;
  /**
   * a declared deployment: the model as its adapter is handed it (its upstream name), whose endpoint is looked up by
   * identity; undefined for a model's implicit one, which is handed the model as the call names it
   */
  bound?: ModelDefinition;
  health: DeploymentHealth;
  /** has an upstream at all (provider_not_configured otherwise) */
  configured: boolean;
}

/** One try: a deployment of one model of the chain. */
interface Attempt {
  deployment: Deployment;
  /** what the adapter is handed */
  bound: ModelDefinition;
  served: Served;
  /** the last deployment the call may go to: it gets the usual retries; the others move on at their first failure */
  last: boolean;
}

/** One try of a call on a deployment: `retries`, whether the upstream client may repeat it there. */
export type RoutedOp<T> = (bound: ModelDefinition, retries: boolean) => T;

export interface RouterOptions {
  clock: Clock;
  random: Random;
  /** told of every upstream attempt (metrics) */
  onAttempt?: (attempt: UpstreamAttempt) => void;
}

/** Errors after which another deployment is tried (and this one cools down). */
function isFailover(cause: ReturnType<typeof failureCause>): boolean {
  return cause === "connection" || cause === "timeout" || cause === 429 || (typeof cause === "number" && cause >= 500);
}

/**
 * An upstream 404 on a model's call: the provider does not know the name it was sent (CONTRACT 13). The operator's
 * setting, not a passing failure: no other deployment is tried and the OpenAI SDKs are told not to retry.
 */
function unknownModelError(attempt: Attempt): AppError {
  const { model, deploymentId } = attempt.served;
  const where = deploymentId === DEFAULT_DEPLOYMENT_ID ? `model '${model.id}'` : `deployment '${deploymentId}' of model '${model.id}'`;
  return new AppError(
    "upstream_error",
    `The upstream provider does not know the model '${upstreamModelName(attempt.bound)}' (HTTP 404): set \`upstreamModel\` of ${where} in CONFIG_FILE to a model name that provider serves (see config.example.json).`,
    { headers: { "x-should-retry": "false" } },
  );
}

export class Router {
  private byModel = new Map<string, Deployment[]>();
  private models = new Map<string, ModelDefinition>();
  private readonly endpoints = new WeakMap<ModelDefinition, Endpoint>();
  /** what the adapters resolve a model's upstream with: a deployment's own, else the model's or its provider's */
  readonly endpointFor: EndpointResolver;
  /** a model's own upstream or its provider's: what a model without deployments is served by */
  private base: EndpointResolver;

  constructor(config: Config, private readonly options: RouterOptions) {
    this.base = createEndpointResolver(config);
    this.endpointFor = (model) => this.endpoints.get(model) ?? this.base(model);
    this.reload(config);
  }

  /**
   * Reads config.models again (the catalog changed at run time, CONTRACT 12): a deployment whose id and upstream are
   * unchanged keeps its health (cooldown, requests per minute); a call already under way keeps what it chose.
   */
  reload(config: Config): void {
    this.base = createEndpointResolver(config);
    const previous = this.byModel;
    this.byModel = new Map();
    this.models = new Map();
    for (const model of config.models) {
      this.models.set(model.id, model);
      const before = new Map((previous.get(model.id) ?? []).map((d) => [d.id, d]));
      this.byModel.set(model.id, model.deployments ? model.deployments.map((d) => this.declared(model, d, before.get(d.id))) : [this.implicit(model)]);
    }
  }

  /** A model's deployments; a model the catalog does not have (built by a caller) gets its implicit one. */
  private deploymentsOf(model: ModelDefinition): Deployment[] {
    let deployments = this.byModel.get(model.id);
    if (!deployments) {
      deployments = [this.implicit(model)];
      this.byModel.set(model.id, deployments);
    }
    return deployments;
  }

  private declared(model: ModelDefinition, d: DeploymentDefinition, before?: Deployment): Deployment {
    const bound: ModelDefinition = { ...model, upstreamModel: d.upstreamModel ?? model.upstreamModel };
    const endpoint = { baseUrl: baseUrlOf(d.baseUrl), apiKey: d.apiKey };
    this.endpoints.set(bound, endpoint);
    const previous = before?.bound ? this.endpoints.get(before.bound) : undefined;
    const same = previous !== undefined && previous.baseUrl === endpoint.baseUrl && previous.apiKey === endpoint.apiKey && before?.health.requestsPerMinute === d.requestsPerMinute;
    const health = same && before ? before.health : new DeploymentHealth(this.options.clock, d.requestsPerMinute);
    return { id: d.id, weight: d.weight, bound, configured: true, health };
  }

  private implicit(model: ModelDefinition): Deployment {
    let configured = true;
    try {
      this.base(model);
    } catch {
      configured = false;
    }
    return { id: DEFAULT_DEPLOYMENT_ID, weight: 1, configured, health: new DeploymentHealth(this.options.clock) };
  }

  /** The model, then its fallbacks in order: the models that may serve a call to it. */
  chain(model: ModelDefinition): ModelDefinition[] {
    const chain = [model];
    for (const id of model.fallbacks ?? []) {
      const fallback = this.models.get(id);
      if (fallback) chain.push(fallback);
    }
    return chain;
  }

  /** A non-streamed call, on the deployments of the model and then (withFallbacks) of its fallbacks. */
  async call<T extends object>(model: ModelDefinition, signal: CancelSignal, withFallbacks: boolean, op: RoutedOp<Promise<T>>): Promise<T & { served: Served }> {
    let lastError: unknown;
    for (const attempt of this.attempts(model, withFallbacks)) {
      const started = this.begin(attempt);
      try {
        const result = await op(attempt.bound, attempt.last);
        this.end(attempt, started, undefined);
        return { ...result, served: attempt.served };
      } catch (err) {
        const next = this.failed(attempt, started, err, signal);
        if (next) throw next;
        lastError = err;
      }
    }
    throw lastError ?? this.noneAvailable(model, withFallbacks);
  }

  /**
   * A stream: moved to another deployment (or fallback) only while it has handed nothing on. Every event names the
   * deployment that produced it (`served`).
   */
  async *stream(model: ModelDefinition, signal: CancelSignal, op: RoutedOp<AsyncIterable<ChatStreamEvent>>): AsyncGenerator<ChatStreamEvent> {
    let lastError: unknown;
    for (const attempt of this.attempts(model, true)) {
      const started = this.begin(attempt);
      let began = false;
      try {
        for await (const event of op(attempt.bound, attempt.last)) {
          if (!began) {
            began = true;
            this.end(attempt, started, undefined);
          }
          yield { ...event, served: attempt.served };
        }
        if (!began) this.end(attempt, started, undefined);
        return;
      } catch (err) {
        if (began) {
          // the answer began: never sent upstream again; a failure still cools its deployment down
          if (isFailover(failureCause(err)) && !signal.aborted) attempt.deployment.health.failed();
          throw err;
        }
        const next = this.failed(attempt, started, err, signal);
        if (next) throw next;
        lastError = err;
      }
    }
    throw lastError ?? this.noneAvailable(model, true);
  }

  /** Each deployment's state, for /api/status/external: no upstream error texts, only whether and until when it cools down. */
  states(): DeploymentState[] {
    const states: DeploymentState[] = [];
    for (const [modelId, deployments] of this.byModel) {
      for (const d of deployments) {
        if (!d.configured) continue;
        const until = d.health.coolingUntilMs();
        const status = until !== undefined ? "cooling_down" : d.health.atRate() ? "rate_limited" : "healthy";
        states.push({ model: modelId, deployment: d.id, status, ...(until !== undefined ? { coolingUntil: new Date(until).toISOString() } : {}) });
      }
    }
    return states;
  }

  /**
   * The deployments to try, in order: of each model of the chain, those neither cooling down nor at their rate,
   * chosen by weight one after the other. When none of the whole chain was available, the cooling ones are tried
   * anyway, soonest recovered first (a model with one upstream keeps being tried; only its rate is a hard limit).
   */
  private *attempts(model: ModelDefinition, withFallbacks: boolean): Generator<Attempt> {
    const chain = withFallbacks ? this.chain(model) : [model];
    const attempt = (m: ModelDefinition, deployment: Deployment, last: boolean): Attempt => ({
      deployment, bound: deployment.bound ?? m, served: { model: m, deploymentId: deployment.id, provider: m.provider }, last,
    });
    // a fallback without an upstream is skipped; the model asked for answers provider_not_configured as before
    const usable = chain.map((m, index) => this.deploymentsOf(m).filter((d) => index === 0 || d.configured));
    const available = usable.map((deployments) => deployments.filter((d) => !d.health.cooling() && !d.health.atRate()));
    let tried = 0;
    for (const [index, m] of chain.entries()) {
      let candidates = available[index] ?? [];
      for (;;) {
        const chosen = chooseWeighted(candidates, this.options.random);
        if (!chosen) break;
        candidates = candidates.filter((d) => d !== chosen);
        tried++;
        // nothing left after this one: neither here nor in a later model of the chain
        const last = candidates.length === 0 && available.slice(index + 1).every((later) => later.length === 0);
        yield attempt(m, chosen, last);
      }
    }
    if (tried > 0) return;
    const cooling = chain.flatMap((m, index) => (usable[index] ?? []).filter((d) => !d.health.atRate()).map((d) => ({ m, d })))
      .sort((a, b) => a.d.health.availableAt() - b.d.health.availableAt());
    for (const [index, { m, d }] of cooling.entries()) yield attempt(m, d, index === cooling.length - 1);
  }

  private begin(attempt: Attempt): number {
    attempt.deployment.health.taken();
    return performance.now();
  }

  private end(attempt: Attempt, started: number, error: unknown): void {
    if (error === undefined) attempt.deployment.health.succeeded();
    const { model, deploymentId, provider } = attempt.served;
    this.options.onAttempt?.({
      model: model.id, provider, deployment: deploymentId, durationMs: performance.now() - started,
      outcome: error === undefined ? "success" : "error",
      ...(error instanceof AppError ? { code: error.code } : {}),
    });
  }

  /** After a failed attempt: the error to throw at once, or undefined when the next deployment is tried. */
  private failed(attempt: Attempt, started: number, err: unknown, signal: CancelSignal): unknown {
    this.end(attempt, started, err);
    const cause = failureCause(err);
    if (signal.aborted) return err;
    if (cause === 404 && attempt.bound.type !== "speech") return unknownModelError(attempt);
    if (!isFailover(cause)) return err;
    attempt.deployment.health.failed();
    return undefined;
  }

  /** Every deployment of the chain is at its requests per minute. */
  private noneAvailable(model: ModelDefinition, withFallbacks: boolean): AppError {
    const chain = withFallbacks ? this.chain(model) : [model];
    const deployments = chain.flatMap((m, index) => this.deploymentsOf(m).filter((d) => index === 0 || d.configured));
    const at = Math.min(...deployments.map((d) => d.health.availableAt()));
    const seconds = Math.max(1, Math.ceil((at - this.options.clock.now()) / 1000));
    return new AppError("upstream_error", `Every upstream deployment of model '${model.id}' is at its requests per minute; retry in ${seconds} s.`, { retryAfterSeconds: seconds });
  }
}
