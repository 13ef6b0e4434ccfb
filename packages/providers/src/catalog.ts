// The model catalog over config.models: lookups for the routes and the /v1/models listing.
import type { Config, ModelDefinition, ModelPricing } from "@gw/config";
import { microsToDollars } from "@gw/shared";

/** A fixed creation time (2024-01-01T00:00:00Z): the catalog is configuration, not a record with a history. */
export const CATALOG_CREATED = 1_704_067_200;

/** The name each of the config's prices goes by where clients read it (in dollars, per the same unit). */
const PUBLIC_PRICE_NAMES = {
  inputPer1k: "input_per_1k_tokens",
  outputPer1k: "output_per_1k_tokens",
  imageStandard: "image_standard",
  imageHighRes: "image_high_res",
  per1kChars: "per_1k_characters",
  perMinute: "per_minute",
} as const satisfies Record<keyof ModelPricing, string>;

/** A model's prices in dollars (what clients read; config keeps micro-dollars), derived from ModelPricing. */
export type PublicPricing = { [K in keyof ModelPricing as (typeof PUBLIC_PRICE_NAMES)[K]]?: number };

export interface ModelListEntry {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  type: ModelDefinition["type"];
  context_window: number | null;
  pricing: PublicPricing;
}

const PRICING_FIELDS = Object.entries(PUBLIC_PRICE_NAMES) as Array<[keyof ModelPricing, keyof PublicPricing]>;

export function publicPricing(pricing: ModelPricing): PublicPricing {
  const out: PublicPricing = {};
  for (const [from, to] of PRICING_FIELDS) {
    const micros = pricing[from];
    if (micros !== undefined) out[to] = microsToDollars(micros);
  }
  return out;
}

const indexes = new WeakMap<ModelDefinition[], Map<string, ModelDefinition>>();

/** Case-sensitive lookup by id (ids are what clients send); undefined when unknown. */
export function findModel(config: Pick<Config, "models">, id: string): ModelDefinition | undefined {
  let index = indexes.get(config.models);
  if (!index) {
    index = new Map(config.models.map((model) => [model.id, model]));
    indexes.set(config.models, index);
  }
  return index.get(id);
}

/** Every configured model, configured upstream or not (CONTRACT 4). */
export function listModels(config: Pick<Config, "models">): ModelListEntry[] {
  return config.models.map((model) => ({
    id: model.id,
    object: "model",
    created: CATALOG_CREATED,
    owned_by: model.ownedBy,
    type: model.type,
    context_window: model.contextWindow ?? null,
    pricing: publicPricing(model.pricing),
  }));
}
