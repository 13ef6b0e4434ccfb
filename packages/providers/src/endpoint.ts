// Where a model's upstream lives: its own base URL and key from the models config, else its provider's from
// config.providers; resolved once.
import type { Config, ModelDefinition, ProviderName } from "@gw/config";
import { AppError } from "@gw/shared";

export interface Endpoint {
  /** without a trailing slash */
  baseUrl: string;
  apiKey: string;
}

export type EndpointResolver = (model: ModelDefinition) => Endpoint;

/** One upstream account: models with their own key (models config) may be another account on the same host. */
export const accountOf = (endpoint: Endpoint): string => `${endpoint.baseUrl}\n${endpoint.apiKey}`;

/**
 * The base that CONTRACT 4's paths (`{base}/v1/...`) are appended to: without trailing slashes, and without a final
 * `/v1`, which OpenAI-style SDK settings include (`https://api.openai.com/v1`) and would otherwise double.
 */
export function baseUrlOf(configured: string): string {
  return configured.replace(/\/+$/, "").replace(/\/v1$/, "");
}

export function createEndpointResolver(config: Config): EndpointResolver {
  const endpoints = new Map<ProviderName, Endpoint>();
  for (const [name, provider] of Object.entries(config.providers) as [ProviderName, Config["providers"][ProviderName]][]) {
    if (provider.baseUrl) endpoints.set(name, { baseUrl: baseUrlOf(provider.baseUrl), apiKey: provider.apiKey ?? "" });
  }
  // a model's own base URL gets only its own key: the provider's is never sent to another host
  const own = new Map<string, Endpoint>();
  for (const model of config.models) {
    const provider = endpoints.get(model.provider);
    // a model with deployments (CONTRACT 13): its calls go to the router's choice; this one serves what is not
    // routed (the voices list) and health checks
    const first = model.deployments?.[0];
    if (first) own.set(model.id, { baseUrl: baseUrlOf(first.baseUrl), apiKey: first.apiKey });
    else if (model.baseUrl) own.set(model.id, { baseUrl: baseUrlOf(model.baseUrl), apiKey: model.apiKey ?? "" });
    else if (model.apiKey && provider) own.set(model.id, { ...provider, apiKey: model.apiKey });
  }
  return (model) => {
    const endpoint = own.get(model.id) ?? endpoints.get(model.provider);
    if (!endpoint) throw new AppError("provider_not_configured", `No upstream is configured for model '${model.id}'.`);
    return endpoint;
  };
}

export const upstreamModelName = (model: ModelDefinition): string => model.upstreamModel ?? model.id;
