import { FLUX_MAX_SIDE, FLUX_MIN_SIDE, FLUX_SIDE_STEP } from "@gw/providers";
import { z } from "zod";
import { imagePrompt, messages, positiveInt, safeString, temperature, visibleText, withDefault } from "./common";
import { streamOptions, streamOptionsNeedStream } from "./text";

export const textTaskBody = z.compile(z.object({
  model: z.string(),
  messages,
  max_tokens: positiveInt.nullish(),
  temperature: temperature.nullish(),
  stream: z.boolean().nullish(),
  stream_options: streamOptions,
}).superRefine(streamOptionsNeedStream));
export type TextTaskBody = z.output<typeof textTaskBody>;

export const IMAGE_MIN_SIDE = 64;
export const IMAGE_MAX_SIDE = 2048;
// Task image models speak Flux: sides 256..1440 in multiples of 32.
const side = z.number().int().min(FLUX_MIN_SIDE).max(FLUX_MAX_SIDE).multipleOf(FLUX_SIDE_STEP);
export const seed = z.number().int().min(0).max(4_294_967_295);

export const imageTaskBody = z.compile(z.object({
  model: z.string(),
  prompt: imagePrompt,
  width: withDefault(side, 1024),
  height: withDefault(side, 1024),
  num_inference_steps: z.number().int().min(1).max(50).nullish(),
  guidance_scale: z.number().min(0).max(20).nullish(),
  seed: seed.nullish(),
}));
export type ImageTaskBody = z.output<typeof imageTaskBody>;

const unit = z.number().min(0).max(1);
/**
 * SPEC 4.1's two settings, and ElevenLabs' other voice settings, passed on when given: left out, they would be
 * dropped silently and the audio (at another speed, say) would not be the one asked for. The speed's range is the
 * model's, checked upstream (a refusal is a 400 at no cost).
 */
export const voiceSettings = z.object({
  stability: unit,
  similarity_boost: unit,
  style: unit.optional(),
  use_speaker_boost: z.boolean().optional(),
  speed: z.number().positive().optional(),
});

/** ElevenLabs output formats look like mp3_44100_128, pcm_16000, ulaw_8000. */
export const outputFormat = z.string().regex(/^(mp3|pcm|ulaw|alaw|opus|wav)_\d{4,6}(_\d{1,3})?$/, "must look like mp3_44100_128");

export const MAX_TTS_CHARS = 10_000;

export const ttsTaskBody = z.compile(z.object({
  model: z.string(),
  text: visibleText(MAX_TTS_CHARS),
  voice: safeString(100).min(1),
  voice_settings: voiceSettings.nullish(),
  output_format: outputFormat.nullish(),
}));
export type TtsTaskBody = z.output<typeof ttsTaskBody>;

export const stsTaskFields = z.compile(z.object({
  model: z.string(),
  voice: safeString(100).min(1),
  voice_settings: voiceSettings.nullish(),
  output_format: outputFormat.nullish(),
}));

const JSON_FIELDS = new Set(["messages", "voice_settings", "stream_options"]);
const NUMBER_FIELDS = new Set(["max_tokens", "temperature", "width", "height", "num_inference_steps", "guidance_scale", "seed"]);
const BOOLEAN_FIELDS = new Set(["stream"]);
const NUMERIC = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/** One multipart field as the JSON value it stands for; a string that isn't one is left as it is, so validation names it. */
function decodeField(name: string, value: string): unknown {
  const text = value.trim();
  if (JSON_FIELDS.has(name) && text.length > 0) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return value;
    }
  }
  if (NUMBER_FIELDS.has(name) && NUMERIC.test(text)) return Number(text);
  if (BOOLEAN_FIELDS.has(name) && (text === "true" || text === "false")) return text === "true";
  return value;
}

/**
 * Multipart fields are strings: JSON-typed fields (messages, voice_settings, stream_options) arrive JSON-encoded,
 * numbers and booleans as their text, so every task model can be sent as a form, not only the speech ones.
 */
export function decodeMultipartFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) out[name] = typeof value === "string" ? decodeField(name, value) : value;
  return out;
}
