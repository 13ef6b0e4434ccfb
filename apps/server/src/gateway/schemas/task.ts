import { z } from "zod";
import { imagePrompt, messages, positiveInt, safeString, temperature } from "./common";

export const textTaskBody = z.object({
  model: z.string(),
  messages,
  max_tokens: positiveInt.nullish(),
  temperature: temperature.nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
});
export type TextTaskBody = z.output<typeof textTaskBody>;

export const IMAGE_MIN_SIDE = 64;
export const IMAGE_MAX_SIDE = 2048;
// Task image models speak Flux: sides 256..1440 in multiples of 32.
const side = z.number().int().min(256).max(1440).multipleOf(32);
export const seed = z.number().int().min(0).max(4_294_967_295);

export const imageTaskBody = z.object({
  model: z.string(),
  prompt: imagePrompt,
  width: side.default(1024),
  height: side.default(1024),
  num_inference_steps: z.number().int().min(1).max(50).nullish(),
  guidance_scale: z.number().min(0).max(20).nullish(),
  seed: seed.nullish(),
});
export type ImageTaskBody = z.output<typeof imageTaskBody>;

const unit = z.number().min(0).max(1);
export const voiceSettings = z.object({ stability: unit, similarity_boost: unit });

/** ElevenLabs output formats look like mp3_44100_128, pcm_16000, ulaw_8000. */
export const outputFormat = z.string().regex(/^(mp3|pcm|ulaw|alaw|opus|wav)_\d{4,6}(_\d{1,3})?$/, "must look like mp3_44100_128");

export const MAX_TTS_CHARS = 10_000;

export const ttsTaskBody = z.object({
  model: z.string(),
  text: safeString(MAX_TTS_CHARS).refine((s) => s.trim().length > 0, { message: "must not be empty" }),
  voice: safeString(100).min(1),
  voice_settings: voiceSettings.nullish(),
  output_format: outputFormat.nullish(),
});
export type TtsTaskBody = z.output<typeof ttsTaskBody>;

export const stsTaskFields = z.object({
  model: z.string(),
  voice: safeString(100).min(1),
  voice_settings: voiceSettings.nullish(),
  output_format: outputFormat.nullish(),
});

/** Multipart fields are strings: voice_settings arrives JSON-encoded. */
export function decodeMultipartFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...fields };
  const vs = fields.voice_settings;
  if (typeof vs === "string" && vs.length > 0) {
    try {
      out.voice_settings = JSON.parse(vs) as unknown;
    } catch {
      out.voice_settings = vs; // left as a string so validation names the parameter
    }
  }
  return out;
}
