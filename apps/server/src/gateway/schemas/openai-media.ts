import { z } from "zod";
import { imagePrompt, MAX_MESSAGE_CHARS, safeString, visibleText, withDefault } from "./common";

// OpenAI's media and moderation routes (CONTRACT 9), field by field as OpenAI's API reference has them. Declared
// once: the routes parse with these and the OpenAPI document is generated from them.

/** `WxH`, each side 1..9999; which sizes a model can draw is the route's (and its upstream's) to check. */
export const imageSize = z.string().regex(/^[1-9]\d{0,3}x[1-9]\d{0,3}$/, "must look like 1024x1024 (<width>x<height>)");

export const imageGenerationBody = z.compile(z.object({
  model: z.string(),
  prompt: imagePrompt,
  n: withDefault(z.number().int().min(1).max(10), 1),
  size: withDefault(imageSize, "1024x1024"),
  response_format: withDefault(z.enum(["url", "b64_json"]), "url"),
  // a style preset, folded into the prompt (moderated with it) as on /api/v1/imageA/generate
  style: safeString(64).nullish(),
  user: safeString(512).nullish(),
}));
export type ImageGenerationBody = z.output<typeof imageGenerationBody>;

/** OpenAI's input limit for speech. */
export const MAX_SPEECH_INPUT_CHARS = 4096;
export const SPEECH_FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export const speechBody = z.compile(z.object({
  model: z.string(),
  input: visibleText(MAX_SPEECH_INPUT_CHARS),
  voice: safeString(100).min(1),
  response_format: withDefault(z.enum(SPEECH_FORMATS), "mp3"),
  // OpenAI's range; the upstream's narrower one is checked by the route
  speed: z.number().min(0.25).max(4).nullish(),
  instructions: safeString(4096).nullish(),
  // the audio is answered whole: OpenAI's server-sent-events form is not offered, and is refused rather than ignored
  stream_format: z.literal("audio").nullish(),
}));
export type SpeechBody = z.output<typeof speechBody>;

export const TRANSCRIPTION_FORMATS = ["json", "text", "srt", "verbose_json", "vtt"] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** The text fields of a transcription form (the audio is its `file` part); numbers arrive as their text. */
export const transcriptionFields = z.compile(z.object({
  model: z.string(),
  language: z.string().regex(/^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$/, "must be an ISO 639-1 or 639-3 language code such as en").nullish(),
  prompt: safeString(MAX_MESSAGE_CHARS).nullish(),
  response_format: withDefault(z.enum(TRANSCRIPTION_FORMATS), "json"),
  temperature: z.string().regex(/^(?:0(?:\.\d+)?|1(?:\.0+)?)$/, "must be a number between 0 and 1").nullish(),
  // the form's `timestamp_granularities[]` parts (the SDKs' spelling), read as one list
  timestamp_granularities: z.union([z.enum(["word", "segment"]), z.array(z.enum(["word", "segment"])).max(2)]).nullish(),
  // the transcript is answered whole (a form field is text): a streamed one is refused rather than ignored
  stream: z.literal("false").nullish(),
}));
export type TranscriptionFields = z.output<typeof transcriptionFields>;

const moderationText = safeString(MAX_MESSAGE_CHARS);
/** OpenAI's multimodal input part: text is checked, an image has no local check (so it is never flagged). */
const moderationPart = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: moderationText }),
  z.object({ type: z.literal("image_url"), image_url: z.object({ url: safeString(MAX_MESSAGE_CHARS) }) }),
]);

export const moderationBody = z.compile(z.object({
  input: z.union([moderationText, z.array(moderationText).min(1).max(100), z.array(moderationPart).min(1).max(100)]),
  model: safeString(100).nullish(),
}));
export type ModerationBody = z.output<typeof moderationBody>;
