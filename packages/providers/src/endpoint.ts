// Where a model's upstream lives: the provider's base URL and key from config.providers, resolved once.
import type { Config, ModelDefinition, ProviderName } from "@gw/config";
import { AppError } from "@gw/shared";

export interface Endpoint {
  /** without a trailing slash */
  baseUrl: string;
  apiKey: string;
}

export type EndpointResolver = (model: ModelDefinition) => Endpoint;

export function createEndpointResolver(config: Config): EndpointResolver {
  const endpoints = new Map<ProviderName, Endpoint>();
  for (const [name, provider] of Object.entries(config.providers) as [ProviderName, Config["providers"][ProviderName]][]) {
    if (provider.baseUrl) endpoints.set(name, { baseUrl: provider.baseUrl.replace(/\/+$/, ""), apiKey: provider.apiKey ?? "" });
  }
  return (model) => {
    const endpoint = endpoints.get(model.provider);
    if (!endpoint) throw new AppError("provider_not_configured", `No upstream is configured for model '${model.id}'.`);
    return endpoint;
  };
}

export const upstreamModelName = (model: ModelDefinition): string => model.upstreamModel ?? model.id;
