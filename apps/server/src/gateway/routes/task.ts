import type { Request, Response } from "express";
import type { ModelDefinition } from "@gw/config";
import { AppError, invalidParameter, missingParameter, newId } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { requireConfigured, resolveModel } from "../deps";
import { setCostHeader, setServedHeader } from "../http/answer-headers";
import { runImages, runSpeechToSpeech, runSpeechToText, runTextToSpeech, type UploadedAudio } from "../handlers/media";
import { requestMeta, type RequestMeta } from "../handlers/request-meta";
import { streamChat } from "../handlers/stream";
import { runChat } from "../handlers/text";
import { parseOrThrow, requireObject } from "../http/validate";
import { decodeMultipartFields, imageTaskBody, stsTaskFields, textTaskBody, ttsTaskBody } from "../schemas/task";
import { modelField } from "./chat";
import { admitKeyForModel } from "../limits/key-gate";
import { audioBody, textCompletionBody, unixSeconds } from "./shapes";

type SpeechTask = "tts" | "sts" | "stt";

/** Speech models are told apart by their id's suffix (speechvendor-tts / -sts / -stt; documented for custom models). */
export function speechTask(model: ModelDefinition): SpeechTask {
  if (model.id.endsWith("-stt")) return "stt";
  if (model.id.endsWith("-sts")) return "sts";
  return "tts";
}

/**
 * What clients declare for an audio file: audio/*, video/* (WebM and MP4 recordings), Ogg and MP4 under
 * application/, or no type at all (application/octet-stream, empty). Anything else (text, images, JSON, PDF) is not
 * sent upstream to be held for and billed.
 */
const AUDIO_TYPE = /^(?:audio\/|video\/|application\/(?:octet-stream|ogg|mp4)(?:;|$)|$)/i;
/**
 * A file part without a Content-Type is text/plain (RFC 7578 4.4), and the form parser reports it so: Python
 * requests' `files=` sends uploads that way. So text/plain is taken as no type, with the bytes to prove it audio.
 */
const UNTYPED = /^text\/plain(?:;|$)/i;

/** The request's audio file part (`field`: `audio` on the task endpoint, `file` on OpenAI's audio routes). */
export function uploadedAudio(req: Request, field = "audio"): UploadedAudio {
  const file = req.file;
  if (!file || file.size === 0) {
    // audio comes only as a file part: a JSON body (base64 or a URL in `audio`) is told how to send it
    if (!req.is("multipart/form-data")) {
      throw new AppError("missing_required_parameter", `Missing required parameter: '${field}' (send it as a file part of a multipart/form-data request).`);
    }
    throw missingParameter(field);
  }
  const type = file.mimetype.trim();
  const untyped = UNTYPED.test(type);
  if (!untyped && !AUDIO_TYPE.test(type)) {
    throw invalidParameter(field, `must be an audio or video file, not ${JSON.stringify(file.mimetype.slice(0, 100))}`);
  }
  return { data: file.buffer, filename: file.originalname || "audio", contentType: untyped || type === "" ? "application/octet-stream" : file.mimetype, untyped, field };
}

interface TaskContext {
  deps: GatewayDeps;
  req: Request;
  res: Response;
  meta: RequestMeta;
  model: ModelDefinition;
  body: Record<string, unknown>;
  id: string;
  created: number;
}

async function textTask(t: TaskContext): Promise<void> {
  const body = parseOrThrow(textTaskBody, t.body);
  requireConfigured(t.deps, t.model);
  const call = { model: t.model, messages: body.messages, maxTokens: body.max_tokens ?? undefined, temperature: body.temperature ?? undefined };
  if (body.stream) {
    await streamChat(t.deps, t.meta, t.res, call, {
      object: "task.completion.chunk", id: t.id, created: t.created, includeUsage: body.stream_options?.include_usage === true,
    });
    return;
  }
  const { result, cost } = await runChat(t.deps, t.meta, call);
  setCostHeader(t.res, cost);
  setServedHeader(t.res, result.served);
  // SPEC 2.5's answer: the text alone (the task endpoint offers no tools, so there are no calls to report), and an
  // OpenAI model's refusal, which comes instead of text and would otherwise leave an empty answer
  const refusal = typeof result.message.refusal === "string" ? { refusal: result.message.refusal } : {};
  const message = { role: "assistant", content: result.content, ...refusal };
  const plain = { content: result.content, message, finishReason: result.finishReason, usage: result.usage };
  t.res.json(textCompletionBody({ id: t.id, object: "task.completion", created: t.created, model: result.served.model.id, result: plain }));
}

async function imageTask(t: TaskContext): Promise<void> {
  const body = parseOrThrow(imageTaskBody, t.body);
  requireConfigured(t.deps, t.model);
  const { images, cost } = await runImages(t.deps, t.meta, {
    model: t.model, prompt: body.prompt, width: body.width, height: body.height, count: 1, responseFormat: "b64_json",
    seed: body.seed ?? undefined, steps: body.num_inference_steps ?? undefined, guidanceScale: body.guidance_scale ?? undefined,
  });
  setCostHeader(t.res, cost);
  t.res.json({
    id: t.id, object: "image.generation", created: t.created, model: t.model.id,
    // SPEC 2.6 names both fields: the upstream's URL and the image data (downloaded by the adapter).
    data: images.map((img) => ({ url: img.url ?? "", b64_json: img.b64Json ?? "" })),
  });
}

async function speechTaskRun(t: TaskContext): Promise<void> {
  const kind = speechTask(t.model);
  if (kind === "stt") {
    const audio = uploadedAudio(t.req);
    requireConfigured(t.deps, t.model);
    const { transcription, cost } = await runSpeechToText(t.deps, t.meta, { model: t.model, audio });
    setCostHeader(t.res, cost);
    t.res.json({ id: t.id, object: "transcription", created: t.created, model: t.model.id, text: transcription.text, duration_seconds: transcription.durationSeconds });
    return;
  }
  if (kind === "sts") {
    const fields = parseOrThrow(stsTaskFields, t.body);
    const audio = uploadedAudio(t.req);
    requireConfigured(t.deps, t.model);
    const { audio: out, cost } = await runSpeechToSpeech(t.deps, t.meta, {
      model: t.model, voice: fields.voice, audio, voiceSettings: fields.voice_settings ?? undefined, outputFormat: fields.output_format ?? undefined,
    });
    setCostHeader(t.res, cost);
    t.res.json({ id: t.id, object: "speech.generation", created: t.created, model: t.model.id, audio: audioBody(out) });
    return;
  }
  const body = parseOrThrow(ttsTaskBody, t.body);
  requireConfigured(t.deps, t.model);
  const { audio, cost } = await runTextToSpeech(t.deps, t.meta, {
    model: t.model, text: body.text, voice: body.voice, voiceSettings: body.voice_settings ?? undefined, outputFormat: body.output_format ?? undefined,
  });
  setCostHeader(t.res, cost);
  t.res.json({ id: t.id, object: "speech.generation", created: t.created, model: t.model.id, audio: audioBody(audio) });
}

/** POST /api/v1/task: the `model` selects text, image or speech (SPEC 4.1). */
export function task(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const multipart = Boolean(req.is("multipart/form-data"));
    const raw = multipart ? decodeMultipartFields(requireObject(req.body ?? {})) : requireObject(req.body);
    const model = resolveModel(deps, modelField(raw), ["text", "image", "speech"]);
    await admitKeyForModel(deps, res, model.id);
    if (model.type === "image" && model.protocol !== "flux") {
      // SPEC 2.6 wants both the image's URL and its data, which only Flux's answer (a fetchable sample URL) gives.
      throw new AppError("unsupported_model", `Unsupported model: '${model.id}' is not a task image model; the task endpoint serves Flux models such as imageB-1-dev.`);
    }
    const t: TaskContext = {
      deps, req, res, model, body: raw, meta: requestMeta(deps, req, res),
      id: newId("task"), created: unixSeconds(deps.ctx.clock.now()),
    };
    if (model.type === "text") return textTask(t);
    if (model.type === "image") return imageTask(t);
    return speechTaskRun(t);
  };
}
