// Cheap reachability checks of the text and speech upstreams for /api/status/external.
import type { Config, ProviderName } from "@gw/config";
import { AppError } from "@gw/shared";
import type { UpstreamClient } from "./http/upstream-client";
import type { ProviderGateway } from "./types";
import { ANTHROPIC_VERSION } from "./anthropic/transform";
import { wrongShape } from "./upstream-errors";
import { accountOf, baseUrlOf, type Endpoint, type EndpointResolver } from "./endpoint";

export type HealthStatus = "healthy" | "degraded" | "unhealthy" | "unknown";

export interface HealthReport {
  status: HealthStatus;
  responseTimeMs: number;
  issue?: string;
}

interface Probe {
  path: string;
  headers: (apiKey: string) => Record<string, string>;
  /** the list the answer must carry: a 200 of another shape is not the provider (a wrong base URL, a proxy's page) */
  listField: "data" | "voices";
}

const PROBES: Partial<Record<ProviderName, Probe>> = {
  textA: { path: "/v1/models", headers: (key) => ({ authorization: `Bearer ${key}` }), listField: "data" },
  textB: { path: "/v1/models", headers: (key) => ({ "x-api-key": key, "anthropic-version": ANTHROPIC_VERSION }), listField: "data" },
  textC: { path: "/v1/models", headers: (key) => ({ authorization: `Bearer ${key}` }), listField: "data" },
  speech: { path: "/v1/voices", headers: (key) => ({ "xi-api-key": key }), listField: "voices" },
};

/** OpenAI's and Anthropic's model list is `{data: [...]}`, ElevenLabs' voices `{voices: [...]}`. */
const isListAnswer = (json: unknown, field: Probe["listField"]): boolean =>
  typeof json === "object" && json !== null && Array.isArray((json as Record<string, unknown>)[field]);

/** Every configured upstream of the kind is probed (in parallel); the text check covers textA, textB and textC. */
const CANDIDATES: Record<"text" | "speech", ProviderName[]> = { text: ["textA", "textB", "textC"], speech: ["speech"] };

const statusError = (status: number) => new AppError("upstream_error", `HTTP ${status}`);

async function probeProvider(client: UpstreamClient, probe: Probe, endpoint: Endpoint, timeoutMs: number, slowMs: number): Promise<HealthReport> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const answer = await client.json({
      url: `${endpoint.baseUrl}${probe.path}`,
      method: "GET",
      headers: { accept: "application/json", ...probe.headers(endpoint.apiKey) },
      signal: AbortSignal.timeout(timeoutMs + 1_000),
      parseError: statusError,
      timeoutMs,
      retry: false,
    });
    if (!isListAnswer(answer, probe.listField)) throw wrongShape(probe.path.slice("/v1/".length));
  } catch (err) {
    const issue = err instanceof AppError && err.code === "upstream_timeout" ? "timed out" : err instanceof AppError ? err.message : "unreachable";
    return { status: "unhealthy", responseTimeMs: elapsed(), issue };
  }
  const responseTimeMs = elapsed();
  // slower than `slowMs` (by default half the allowed time): answering, but not as it should
  if (responseTimeMs > slowMs) return { status: "degraded", responseTimeMs, issue: "slow response" };
  return { status: "healthy", responseTimeMs };
}

interface Target {
  /** the provider, or `provider (model)` for a model's own upstream */
  name: string;
  probe: Probe;
  endpoint: Endpoint;
}

/**
 * The upstreams a kind's check probes: each configured provider's, and each one a model of theirs has of its own in
 * the models config (base URL or key), once per account; a model served only by its own upstream counts too.
 */
function targetsOf(config: Config, endpointFor: EndpointResolver, kind: "text" | "speech"): Target[] {
  return CANDIDATES[kind].flatMap((name) => {
    const probe = PROBES[name];
    if (!probe) return [];
    const { baseUrl, apiKey } = config.providers[name];
    const targets = new Map<string, Target>();
    const add = (label: string, endpoint: Endpoint) => {
      if (!targets.has(accountOf(endpoint))) targets.set(accountOf(endpoint), { name: label, probe, endpoint });
    };
    if (baseUrl) add(name, { baseUrl: baseUrlOf(baseUrl), apiKey: apiKey ?? "" });
    for (const model of config.models) {
      if (model.provider !== name) continue;
      if (model.deployments) {
        for (const d of model.deployments) add(`${name} (${model.id}/${d.id})`, { baseUrl: baseUrlOf(d.baseUrl), apiKey: d.apiKey });
      } else if (model.baseUrl || (model.apiKey && baseUrl)) add(`${name} (${model.id})`, endpointFor(model));
    }
    return [...targets.values()];
  });
}

/**
 * One status for all configured upstreams of a kind: healthy when all are; unhealthy when none answers; degraded
 * otherwise (some models work, some don't), the issue naming each upstream that is not healthy.
 */
export function createHealthCheck(client: UpstreamClient, config: Config, endpointFor: EndpointResolver): ProviderGateway["checkHealth"] {
  // read again when the catalog changed at run time (config.models is then a new array)
  let targets = { models: config.models, text: targetsOf(config, endpointFor, "text"), speech: targetsOf(config, endpointFor, "speech") };
  return async (kind: "text" | "speech", timeoutMs: number, slowMs = timeoutMs / 2): Promise<HealthReport> => {
    if (targets.models !== config.models) {
      targets = { models: config.models, text: targetsOf(config, endpointFor, "text"), speech: targetsOf(config, endpointFor, "speech") };
    }
    const configured = targets[kind];
    if (configured.length === 0) return { status: "unknown", responseTimeMs: 0, issue: "not configured" };
    const reports = await Promise.all(configured.map(({ probe, endpoint }) => probeProvider(client, probe, endpoint, timeoutMs, slowMs)));
    const responseTimeMs = Math.max(...reports.map((r) => r.responseTimeMs));
    const failing = reports.flatMap((r, i) => (r.status === "healthy" ? [] : [`${configured[i]?.name}: ${r.issue ?? r.status}`]));
    if (failing.length === 0) return { status: "healthy", responseTimeMs };
    const issue = configured.length === 1 ? reports[0]?.issue : failing.join("; ");
    const status = reports.every((r) => r.status === "unhealthy") ? "unhealthy" : "degraded";
    return { status, responseTimeMs, ...(issue ? { issue } : {}) };
  };
}
