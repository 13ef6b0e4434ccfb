import type { ModelDefinition, ModelType } from "@gw/config";
import type { Metering } from "@gw/gateway";
import type { ProviderGateway } from "@gw/providers";
import { AppError } from "@gw/shared";
import type { AppContext } from "../context";
import type { RequestLimits } from "@gw/limits";
import type { RequestMeta, UsageFields } from "./handlers/request-meta";
import type { StoredUsage } from "@gw/billing";

/** The metered-call pipeline (@gw/gateway) over this app's requests and usage records. */
export type GatewayMetering = Metering<RequestMeta, UsageFields, StoredUsage>;

/** What the gateway's handlers share: the app's services plus the upstream gateway. */
export interface GatewayDeps {
  ctx: AppContext;
  providers: ProviderGateway;
  /** the plans' and keys' request limits (a key's are checked once the model is known: limits/key-gate.ts) */
  limits: RequestLimits;
  /** hold → upstream → settle (or release) of every model call */
  metering: GatewayMetering;
}

/** The model, or 400 unsupported_model naming the value; 503 provider_not_configured when its upstream is unset. */
export function resolveModel(deps: GatewayDeps, id: string, types: ModelType[], what = "model"): ModelDefinition {
  const model = deps.ctx.config.models.find((m) => m.id === id && types.includes(m.type));
  if (!model) {
    throw new AppError("unsupported_model", `Unsupported ${what}: '${id.slice(0, 100)}' is not a supported ${types.join(" or ")} model.`);
  }
  return model;
}

/**
 * A missing upstream is the operator's configuration, not a passing failure: `x-should-retry: false` keeps the
 * OpenAI SDKs, which retry every 5xx, from asking again (and spending the caller's requests per minute) for nothing.
 */
export function requireConfigured(deps: GatewayDeps, model: ModelDefinition): void {
  if (!model.baseUrl && !model.deployments && !deps.ctx.config.providers[model.provider]?.baseUrl) {
    throw new AppError("provider_not_configured", `The upstream of model '${model.id}' is not configured.`, { headers: { "x-should-retry": "false" } });
  }
}
