// ElevenLabs protocol (speech): text-to-speech, speech-to-speech, speech-to-text and the voices list. Pure transforms.
import { AppError } from "@gw/shared";
import { FormData } from "undici";
import { z } from "zod";
import type { Endpoint } from "../endpoint";
import type { SpeechRequest, SpeechToSpeechRequest, TranscriptionRequest, TranscriptionResult } from "../types";
import { pickPath, readErrorMessage, upstreamStatusError, validationErrorMessage, wrongShape } from "../upstream-errors";

export const DEFAULT_OUTPUT_FORMAT = "mp3_44100_128";

export interface BuiltSpeechRequest {
  url: string;
  headers: Record<string, string>;
  body: string | FormData;
}

const voicesResponseSchema = z.compile(z.looseObject({
  voices: z.array(z.looseObject({ voice_id: z.string().min(1), name: z.string() })),
}));

const transcriptionSchema = z.compile(z.looseObject({
  text: z.string(),
  audio_duration: z.number().nonnegative().optional(),
  audio_duration_secs: z.number().nonnegative().optional(),
  language_code: z.string().nullish(),
  words: z.array(z.looseObject({
    text: z.string().nullish(), type: z.string().nullish(), start: z.number().nonnegative().nullish(), end: z.number().nonnegative().nullish(),
  })).optional(),
}));

const outputQuery = (format: string | undefined) => `?output_format=${encodeURIComponent(format ?? DEFAULT_OUTPUT_FORMAT)}`;

export function buildVoicesRequest(endpoint: Endpoint): { url: string; headers: Record<string, string> } {
  return { url: `${endpoint.baseUrl}/v1/voices`, headers: { "xi-api-key": endpoint.apiKey, accept: "application/json" } };
}

/**
 * Voice name → voice id, as listed and lower-cased; ids also map to themselves so a caller may pass an id. Names are
 * compared in Unicode NFC, so a name typed in decomposed form ("Zoe" + U+0308, as macOS input gives) is "Zoë".
 */
export interface VoiceIndex {
  exact: Map<string, string>;
  folded: Map<string, string>;
}

export function parseVoicesResponse(json: unknown): VoiceIndex {
  const parsed = voicesResponseSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("voices");
  const index: VoiceIndex = { exact: new Map(), folded: new Map() };
  for (const voice of parsed.data.voices) {
    const name = voiceKey(voice.name);
    index.exact.set(name, voice.voice_id);
    index.folded.set(name.toLowerCase(), voice.voice_id);
  }
  // a name wins over an id spelled the same
  for (const { voice_id: id } of parsed.data.voices) {
    if (!index.exact.has(id)) index.exact.set(id, id);
    if (!index.folded.has(id.toLowerCase())) index.folded.set(id.toLowerCase(), id);
  }
  return index;
}

/**
 * The voice id of a name: the voice listed with exactly that name (or id) first, case-insensitively only when none is,
 * so "Adam" never reaches another voice named "adam".
 */
export function findVoice(index: VoiceIndex, name: string): string | undefined {
  const key = voiceKey(name);
  return index.exact.get(key) ?? index.folded.get(key.toLowerCase());
}

const voiceKey = (name: string): string => name.trim().normalize("NFC");

export function buildTextToSpeechRequest(endpoint: Endpoint, upstreamModel: string, voiceId: string, req: SpeechRequest): BuiltSpeechRequest {
  const body: Record<string, unknown> = { text: req.text, model_id: upstreamModel };
  if (req.voiceSettings) body.voice_settings = req.voiceSettings;
  return {
    url: `${endpoint.baseUrl}/v1/text-to-speech/${encodeURIComponent(voiceId)}${outputQuery(req.outputFormat)}`,
    headers: { "xi-api-key": endpoint.apiKey, "content-type": "application/json", accept: "audio/*" },
    body: JSON.stringify(body),
  };
}

/** A Buffer is a Blob part at run time; the DOM typing (the dashboard's typecheck reads these types) asks for an ArrayBuffer-backed view. */
const blobPart = (data: Buffer): Uint8Array<ArrayBuffer> => data as Uint8Array<ArrayBuffer>;

export function buildSpeechToSpeechRequest(endpoint: Endpoint, upstreamModel: string, voiceId: string, req: SpeechToSpeechRequest): BuiltSpeechRequest {
  const form = new FormData();
  form.append("audio", new Blob([blobPart(req.audio.data)], { type: req.audio.contentType }), req.audio.filename);
  form.append("model_id", upstreamModel);
  if (req.voiceSettings) form.append("voice_settings", JSON.stringify(req.voiceSettings));
  return {
    url: `${endpoint.baseUrl}/v1/speech-to-speech/${encodeURIComponent(voiceId)}${outputQuery(req.outputFormat)}`,
    headers: { "xi-api-key": endpoint.apiKey, accept: "audio/*" },
    body: form,
  };
}

export function buildSpeechToTextRequest(endpoint: Endpoint, upstreamModel: string, req: TranscriptionRequest): BuiltSpeechRequest {
  const form = new FormData();
  form.append("model_id", upstreamModel);
  form.append("file", new Blob([blobPart(req.audio.data)], { type: req.audio.contentType }), req.audio.filename);
  if (req.language) form.append("language_code", req.language);
  return { url: `${endpoint.baseUrl}/v1/speech-to-text`, headers: { "xi-api-key": endpoint.apiKey, accept: "application/json" }, body: form };
}

/** The audio length when the answer reports it (ElevenLabs' does not), and the end of the last timed word. */
export function parseSpeechToTextResponse(json: unknown): TranscriptionResult {
  const parsed = transcriptionSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("transcription");
  const { text, words } = parsed.data;
  const reported = parsed.data.audio_duration_secs ?? parsed.data.audio_duration;
  const lastWordEnd = (words ?? []).reduce((max, word) => Math.max(max, word.end ?? 0), 0);
  // spoken words only (ElevenLabs also lists the spacing between them and audio events such as "(laughter)")
  const timed = (words ?? []).flatMap((w) => (w.type == null || w.type === "word") && w.text && w.start != null && w.end != null
    ? [{ word: w.text, start: w.start, end: w.end }] : []);
  return {
    text, durationSeconds: reported, lastWordEndSeconds: lastWordEnd > 0 ? lastWordEnd : undefined,
    ...(timed.length > 0 ? { words: timed } : {}), ...(parsed.data.language_code ? { language: parsed.data.language_code } : {}),
  };
}

/**
 * ElevenLabs' answer for a voice id it does not have (404, earlier 400, `detail.status` voice_not_found or
 * voice_does_not_exist): a voice deleted since the voices list was fetched. The adapter turns it into the unknown
 * voice's 400 once the list is fetched again.
 */
export class VoiceNotFoundError extends AppError {}

export function parseVoiceAudioError(status: number, body: string): AppError {
  let detailStatus: unknown;
  try {
    detailStatus = pickPath(JSON.parse(body) as unknown, "detail", "status");
  } catch {
    detailStatus = undefined;
  }
  if ((status === 404 || status === 400) && (detailStatus === "voice_not_found" || detailStatus === "voice_does_not_exist")) {
    return new VoiceNotFoundError("invalid_parameter", "The upstream provider has no such voice.");
  }
  return parseError(status, body);
}

/**
 * ElevenLabs answers 401 `detail.status: quota_exceeded` when the operator's account has used up its characters: the
 * account failing to pay, as a 402 would be, not refused credentials.
 */
export function parseError(status: number, body: string): AppError {
  const message = readErrorMessage(body, (json) => {
    const detail = pickPath(json, "detail");
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail)) return validationErrorMessage(detail);
    return pickPath(detail, "message");
  });
  if (status === 401 && /"quota_exceeded"/.test(body)) return upstreamStatusError(402, message);
  return upstreamStatusError(status, message);
}
