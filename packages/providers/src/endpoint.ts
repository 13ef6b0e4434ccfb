// Where a model's upstream lives: the provider's base URL and key from config.providers, resolved once.
import type { Config, ModelDefinition, ProviderName } from "@gw/config";
import { AppError } from "@gw/shared";

export interface Endpoint {
  /** without a trailing slash */
  baseUrl: string;
  apiKey: string;
}

export type EndpointResolver = (model: ModelDefinition) => Endpoint;

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
  return (model) => {
    const endpoint = endpoints.get(model.provider);
    if (!endpoint) throw new AppError("provider_not_configured", `No upstream is configured for model '${model.id}'.`);
    return endpoint;
  };
}

export const upstreamModelName = (model: ModelDefinition): string => model.upstreamModel ?? model.id;
