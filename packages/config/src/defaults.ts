// Catalog data: prices, models, plans, credit packages. Operators override any of it with the
// JSON file named by CONFIG_FILE (see docs/configuration.md). Money is integer micro-dollars.

import type { CreditPackage, ModelDefinition, ModelPricing, PlanDefinition, Protocol, ProviderName } from "./catalog-schema";

/** Longer passwords are refused before hashing, so a huge body cannot buy seconds of argon2 time (@gw/auth). */
export const MAX_PASSWORD_LENGTH = 256;

const TEXT_PRICE: ModelPricing = { inputPer1k: 1_000, outputPer1k: 2_000 };
const IMAGE_PRICE: ModelPricing = { imageStandard: 100_000, imageHighRes: 200_000 };

const text = (id: string, provider: ProviderName, protocol: Protocol, contextWindow: number, maxOutputTokens: number): ModelDefinition => ({
  id, type: "text", provider, protocol, contextWindow, maxOutputTokens, pricing: TEXT_PRICE, ownedBy: provider,
});

/** The model behind image endpoint A (SPEC 4.2), and the version a request gets when it names none. */
export const IMAGE_A_MODEL_ID = "imageA";
export const IMAGE_A_DEFAULT_VERSION = "5";

/** Versions a request to image endpoint A may name, each with the upstream model name it sends. */
export function modelVersions(model: ModelDefinition): ReadonlyMap<string, string> {
  return new Map(Object.entries(model.versions ?? { [IMAGE_A_DEFAULT_VERSION]: model.upstreamModel ?? model.id }));
}

// The output cap is the most `max_tokens` may ask for. The original GPT-4, GPT-4-32k, GPT-3.5 Turbo (4k) and
// davinci models had none besides their context window (prompt + max_tokens within it), so neither do their
// counterparts here; GPT-4 Turbo, Claude 3 and the Mixtral models answer at most 4096 tokens.
export const DEFAULT_MODELS: ModelDefinition[] = [
  text("textA-4", "textA", "openai", 8192, 8192),
  text("textA-4-turbo", "textA", "openai", 128000, 4096),
  text("textA-4-32k", "textA", "openai", 32768, 32768),
  text("textA-3.5-turbo", "textA", "openai", 4096, 4096),
  text("text-davinci-003", "textA", "openai", 4097, 4097),
  { id: "text-embedding-ada-002", type: "embedding", provider: "textA", protocol: "openai", contextWindow: 8191, pricing: { inputPer1k: 1_000 }, ownedBy: "textA" },
  text("textB-3-opus", "textB", "anthropic", 200000, 4096),
  text("textB-3-sonnet", "textB", "anthropic", 200000, 4096),
  text("textB-3-haiku", "textB", "anthropic", 200000, 4096),
  text("textB-2", "textB", "anthropic", 100000, 4096),
  text("textB-instant-1", "textB", "anthropic", 100000, 4096),
  text("textC-8x7b", "textC", "openai", 32768, 4096),
  text("textC-8x22b", "textC", "openai", 65536, 4096),
  // versions: {"5": upstreamModel ?? id} unless the models config maps more (see modelVersions)
  { id: IMAGE_A_MODEL_ID, type: "image", provider: "imageA", protocol: "openai-images", pricing: IMAGE_PRICE, ownedBy: "imageA" },
  { id: "imageB-1-pro", type: "image", provider: "imageB", protocol: "flux", pricing: IMAGE_PRICE, ownedBy: "imageB" },
  { id: "imageB-1-dev", type: "image", provider: "imageB", protocol: "flux", pricing: IMAGE_PRICE, ownedBy: "imageB" },
  { id: "imageB-1-schnell", type: "image", provider: "imageB", protocol: "flux", pricing: IMAGE_PRICE, ownedBy: "imageB" },
  { id: "speechvendor-tts", type: "speech", provider: "speech", protocol: "elevenlabs", pricing: { per1kChars: 15_000 }, ownedBy: "speechvendor" },
  // Speech-to-speech converts audio (no text), billed like transcription by the minute of input; /v1/models lists
  // only the price it charges.
  { id: "speechvendor-sts", type: "speech", provider: "speech", protocol: "elevenlabs", pricing: { perMinute: 6_000 }, ownedBy: "speechvendor" },
  { id: "speechvendor-stt", type: "speech", provider: "speech", protocol: "elevenlabs", pricing: { perMinute: 6_000 }, ownedBy: "speechvendor" },
];

export const DEFAULT_PLANS: PlanDefinition[] = [
  { id: "free", name: "Free", price: 0, currency: "usd", interval: "month", monthlyCreditsMicros: 0, requestsPerMinute: 20, concurrentRequests: 2,
    features: ["20 requests per minute", "2 concurrent requests", "Pay as you go credits"] },
  { id: "pro", name: "Pro", price: 20, currency: "usd", interval: "month", monthlyCreditsMicros: 20_000_000, requestsPerMinute: 600, concurrentRequests: 20,
    features: ["600 requests per minute", "20 concurrent requests", "$20 of credits every month"] },
  { id: "team", name: "Team", price: 100, currency: "usd", interval: "month", monthlyCreditsMicros: 110_000_000, requestsPerMinute: 3000, concurrentRequests: 100,
    features: ["3000 requests per minute", "100 concurrent requests", "$110 of credits every month"] },
];

export const DEFAULT_CREDIT_PACKAGES: CreditPackage[] = [
  { amount: 10, bonus: 0, total: 10 },
  { amount: 50, bonus: 5, total: 55 },
  { amount: 100, bonus: 15, total: 115 },
];

/** SPEC 8 limits: [points, window seconds]. */
export const DEFAULT_LIMITS = {
  register: { points: 5, duration: 3600 },
  loginIp: { points: 10, duration: 3600 },
  loginAccount: { points: 5, duration: 900 },
  passwordReset: { points: 3, duration: 3600 },
  credits: { points: 60, duration: 60 },
  checkout: { points: 10, duration: 60 },
  paymentIntent: { points: 10, duration: 60 },
  subscription: { points: 5, duration: 60 },
  keysList: { points: 100, duration: 60 },
  keysCreate: { points: 10, duration: 60 },
  keysUpdate: { points: 50, duration: 60 },
  keysDelete: { points: 50, duration: 60 },
  status: { points: 300, duration: 60 },
  statusExternal: { points: 60, duration: 60 },
  authMe: { points: 300, duration: 60 },
  billingRead: { points: 60, duration: 60 },
  usage: { points: 120, duration: 60 },
  redeem: { points: 10, duration: 60 },
} as const;

