// CONTRACT 6: prices are data on the model (integer micro-dollars); these turn usage into a cost.
// Every result is a whole number of micro-dollars, rounded up so a fraction is never given away.
import type { ModelDefinition } from "@gw/config";
import type { TextUsage } from "@gw/providers";

const per1k = (units: number, pricePer1k = 0): number => Math.ceil((units * pricePer1k) / 1000);

export function textCost(model: ModelDefinition, usage: TextUsage): number {
  return per1k(usage.promptTokens, model.pricing.inputPer1k) + per1k(usage.completionTokens, model.pricing.outputPer1k);
}

/**
 * CONTRACT 13: a call that may be served by a fallback is held at the dearest model of its chain (the model, then
 * its fallbacks), and charged at the price of the one that served.
 */
export function dearestOf(chain: readonly ModelDefinition[], costOf: (model: ModelDefinition) => number): number {
  let worst = 0;
  for (const model of chain) worst = Math.max(worst, costOf(model));
  return worst;
}

/** Standard up to 1024x1024 pixels, high resolution above (CONTRACT 6). */
export function imageUnitPrice(model: ModelDefinition, width: number, height: number): number {
  const standard = width * height <= 1024 * 1024;
  return (standard ? model.pricing.imageStandard : model.pricing.imageHighRes) ?? 0;
}

export function imageCost(model: ModelDefinition, width: number, height: number, count: number): number {
  return imageUnitPrice(model, width, height) * count;
}

export function characterCost(model: ModelDefinition, characters: number): number {
  return per1k(characters, model.pricing.per1kChars);
}

/** Audio is billed per started second, as a fraction of the per-minute price, at least one per request (the upstream processed a file). */
export const MIN_BILLED_SECONDS = 1;
export const billedSeconds = (seconds: number): number => Math.max(MIN_BILLED_SECONDS, Math.ceil(seconds));

export function audioCost(model: ModelDefinition, seconds: number): number {
  return Math.ceil((billedSeconds(seconds) * (model.pricing.perMinute ?? 0)) / 60);
}

/**
 * Worst-case duration of an upload whose container declares none (audio-duration.ts): 2,000 bytes per second
 * (16 kbit/s, below any speech codec the upstream accepts at usable quality).
 */
export const AUDIO_BYTES_PER_SECOND_FLOOR = 2_000;

/** Chat formats add a few tokens per message (role, separators); counted so the worst case is never short. */
export const TOKENS_PER_MESSAGE = 4;
export const TOKENS_PER_REPLY = 3;
/**
 * An image part in a prompt, before the upstream reports its usage: OpenAI's fixed cost of a low-detail image, the
 * least an image costs there, so a stream cut before the usage arrives never gets its pictures for free.
 */
export const IMAGE_PART_TOKENS = 85;
