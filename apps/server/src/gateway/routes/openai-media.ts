// OpenAI's image, audio and moderation routes (CONTRACT 9): thin transports over the task endpoint's metered calls.
import type { Request, Response } from "express";
import { FLUX_MAX_SIDE, FLUX_MIN_SIDE, FLUX_SIDE_STEP } from "@gw/providers";
import { IMAGE_A_DEFAULT_VERSION, modelVersions, type ModelDefinition } from "@gw/config";
import { AppError, invalidParameter, randomBase62 } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { requireConfigured, resolveModel } from "../deps";
import { admitKeyForModel } from "../limits/key-gate";
import { setCostHeader } from "../http/answer-headers";
import { runImages, runSpeechToText, runTextToSpeech } from "../handlers/media";
import { requestMeta } from "../handlers/request-meta";
import { parseOrThrow, requireObject } from "../http/validate";
import { sendRaw } from "../idempotency/middleware";
import { checkLocalPolicy, type ModerationCategory } from "@gw/gateway";
import { IMAGE_MAX_SIDE, IMAGE_MIN_SIDE } from "../schemas/task";
import {
  imageGenerationBody, moderationBody, speechBody, transcriptionFields, type ModerationBody, type SpeechFormat,
} from "../schemas/openai-media";
import { modelField } from "./chat";
import { imageUrl } from "./images";
import { unixSeconds } from "./shapes";
import { speechTask, uploadedAudio } from "./task";
import { transcriptAnswer } from "./transcript-formats";

/** The sides a model can draw: Flux's bounds, or the OpenAI Images protocol's as on /api/v1/imageA/generate. */
function checkSize(model: ModelDefinition, width: number, height: number): void {
  if (model.protocol === "flux") {
    const fits = (side: number) => side >= FLUX_MIN_SIDE && side <= FLUX_MAX_SIDE && side % FLUX_SIDE_STEP === 0;
    if (!fits(width) || !fits(height)) {
      throw invalidParameter("size", `each side must be ${FLUX_MIN_SIDE}..${FLUX_MAX_SIDE} and a multiple of ${FLUX_SIDE_STEP} for model '${model.id}'`);
    }
    return;
  }
  if ([width, height].some((side) => side < IMAGE_MIN_SIDE || side > IMAGE_MAX_SIDE)) {
    throw invalidParameter("size", `each side must be ${IMAGE_MIN_SIDE}..${IMAGE_MAX_SIDE} for model '${model.id}'`);
  }
}

/** POST /v1/images/generations: any image model; `imageA` is its default version. Moderated and billed as the task endpoint. */
export function imagesGenerations(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const raw = requireObject(req.body);
    const model = resolveModel(deps, modelField(raw), ["image"]);
    await admitKeyForModel(deps, res, model.id);
    const body = parseOrThrow(imageGenerationBody, raw);
    const [width = 0, height = 0] = body.size.split("x").map(Number);
    checkSize(model, width, height);
    requireConfigured(deps, model);
    const upstreamModel = model.protocol === "openai-images" ? modelVersions(model).get(IMAGE_A_DEFAULT_VERSION) : undefined;
    const meta = requestMeta(deps, req, res);
    const { images, cost } = await runImages(deps, meta, {
      model, upstreamModel, prompt: body.prompt, width, height, count: body.n, style: body.style ?? undefined, responseFormat: body.response_format,
    });
    setCostHeader(res, cost);
    res.json({
      created: unixSeconds(deps.ctx.clock.now()),
      // the form asked for; an upstream that answered only the other form is given in the one it has
      data: images.map((img) => (body.response_format === "b64_json" && img.b64Json !== undefined ? { b64_json: img.b64Json } : { url: imageUrl(img) })),
    });
  };
}

/**
 * OpenAI's speech formats as ElevenLabs output formats (CONTRACT 4's upstream): mp3, Ogg Opus, WAV and 16-bit PCM at
 * 24 kHz (OpenAI's rate). ElevenLabs produces no AAC or FLAC: those are 400 naming `response_format`.
 */
const SPEECH_OUTPUT: Record<SpeechFormat, { upstream?: string; contentType: string }> = {
  mp3: { upstream: "mp3_44100_128", contentType: "audio/mpeg" },
  opus: { upstream: "opus_48000_128", contentType: "audio/opus" },
  wav: { upstream: "wav_24000", contentType: "audio/wav" },
  pcm: { upstream: "pcm_24000", contentType: "audio/pcm" },
  aac: { contentType: "audio/aac" },
  flac: { contentType: "audio/flac" },
};
const SERVED_SPEECH_FORMATS = Object.entries(SPEECH_OUTPUT).filter(([, f]) => f.upstream).map(([name]) => name);
/** ElevenLabs' `voice_settings.speed` range. */
const UPSTREAM_SPEED = { min: 0.7, max: 1.2 };

/** The model, which must be a speech model of the given kind (by its id's suffix, as on the task endpoint). */
function speechModel(deps: GatewayDeps, raw: Record<string, unknown>, kind: "tts" | "stt"): ModelDefinition {
  const model = resolveModel(deps, modelField(raw), ["speech"]);
  if (speechTask(model) !== kind) {
    throw new AppError("unsupported_model", `Unsupported model: '${model.id}' is not a ${kind === "tts" ? "text-to-speech" : "speech-to-text"} model.`);
  }
  return model;
}

/** POST /v1/audio/speech: the audio bytes with their content type. */
export function audioSpeech(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const raw = requireObject(req.body);
    const model = speechModel(deps, raw, "tts");
    await admitKeyForModel(deps, res, model.id);
    const body = parseOrThrow(speechBody, raw);
    const output = SPEECH_OUTPUT[body.response_format];
    if (!output.upstream) {
      throw invalidParameter("response_format", `'${body.response_format}' cannot be produced by model '${model.id}'; use one of ${SERVED_SPEECH_FORMATS.join(", ")}`);
    }
    if (body.speed != null && (body.speed < UPSTREAM_SPEED.min || body.speed > UPSTREAM_SPEED.max)) {
      throw invalidParameter("speed", `must be between ${UPSTREAM_SPEED.min} and ${UPSTREAM_SPEED.max} for model '${model.id}' (its upstream's range)`);
    }
    if (body.instructions) throw invalidParameter("instructions", `is not supported by model '${model.id}' (its upstream takes no voice instructions)`);
    requireConfigured(deps, model);
    const meta = requestMeta(deps, req, res);
    const { audio, cost } = await runTextToSpeech(deps, meta, {
      model, text: body.input, voice: body.voice, outputFormat: output.upstream, voiceSettings: body.speed != null ? { speed: body.speed } : undefined,
    });
    setCostHeader(res, cost);
    sendRaw(res, output.contentType, audio.audio);
  };
}

/** POST /v1/audio/transcriptions: multipart `file`; every OpenAI response_format. */
export function audioTranscriptions(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const raw = requireObject(req.body ?? {});
    const model = speechModel(deps, raw, "stt");
    await admitKeyForModel(deps, res, model.id);
    const fields = parseOrThrow(transcriptionFields, raw);
    const audio = uploadedAudio(req, "file");
    requireConfigured(deps, model);
    const meta = requestMeta(deps, req, res);
    const language = fields.language ?? undefined;
    const { transcription, cost } = await runSpeechToText(deps, meta, { model, audio, language });
    setCostHeader(res, cost);
    const granularities = fields.timestamp_granularities ?? [];
    const answer = transcriptAnswer(fields.response_format, { ...transcription, durationSeconds: transcription.durationSeconds ?? 0 }, {
      language, words: granularities === "word" || (Array.isArray(granularities) && granularities.includes("word")),
    });
    if (typeof answer.body === "string") sendRaw(res, answer.contentType, answer.body);
    else res.json(answer.body);
  };
}

/** OpenAI's moderation categories, and the gateway policy's own two (which OpenAI's list has no name for). */
const OPENAI_CATEGORIES = [
  "sexual", "sexual/minors", "harassment", "harassment/threatening", "hate", "hate/threatening", "illicit", "illicit/violent",
  "self-harm", "self-harm/intent", "self-harm/instructions", "violence", "violence/graphic",
] as const;
const POLICY_CATEGORY: Record<ModerationCategory, string> = {
  sexual: "sexual", violence: "violence", hate: "hate", intellectual_property: "intellectual_property", personal_information: "personal_information",
};
const ALL_CATEGORIES = [...OPENAI_CATEGORIES, "intellectual_property", "personal_information"];
export const MODERATION_MODEL = "gateway-policy";

/** One result per input: a list of strings is one result each, a list of parts (text and images) one for them all. */
function moderationInputs(input: ModerationBody["input"]): { texts: string[]; types: string[] }[] {
  if (typeof input === "string") return [{ texts: [input], types: ["text"] }];
  if (input.every((item): item is string => typeof item === "string")) return input.map((text) => ({ texts: [text], types: ["text"] }));
  const parts = input.filter((item) => typeof item !== "string");
  return [{
    texts: parts.flatMap((p) => (p.type === "text" ? [p.text] : [])),
    types: [...new Set(parts.map((p) => (p.type === "text" ? "text" : "image")))],
  }];
}

/** POST /v1/moderations: the gateway's own image-prompt policy (docs/moderation.md) in OpenAI's shape; free. */
export function moderations() {
  return (req: Request, res: Response) => {
    const body = parseOrThrow(moderationBody, requireObject(req.body));
    const results = moderationInputs(body.input).map(({ texts, types }) => {
      const verdict = checkLocalPolicy(...texts);
      const flaggedAs = verdict.flagged && verdict.category ? POLICY_CATEGORY[verdict.category] : undefined;
      return {
        flagged: flaggedAs !== undefined,
        categories: Object.fromEntries(ALL_CATEGORIES.map((c) => [c, c === flaggedAs])),
        category_scores: Object.fromEntries(ALL_CATEGORIES.map((c) => [c, c === flaggedAs ? 1 : 0])),
        category_applied_input_types: Object.fromEntries(ALL_CATEGORIES.map((c) => [c, types.includes("text") ? ["text"] : []])),
      };
    });
    res.json({ id: `modr-${randomBase62(24)}`, model: MODERATION_MODEL, results });
  };
}
