import type { ModelDefinition } from "@gw/config";
import type { AudioResult, GeneratedImage, ImageRequest, TranscriptionResult, VoiceSettings } from "@gw/providers";
import { AppError, characterCount, invalidParameter } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import {
  audioCost, billedSeconds, characterCost, declaredAudioSeconds, heldAudioSeconds, imageCost, MIN_BILLED_SECONDS, moderateImagePrompt, producedAudioSeconds,
} from "@gw/gateway";
import type { RequestMeta } from "./request-meta";

export type ImageCall = Omit<ImageRequest, "signal">;

/** Moderation first (a rejected prompt costs nothing and never reaches upstream), then count x price by size. */
export async function runImages(deps: GatewayDeps, meta: RequestMeta, call: ImageCall): Promise<{ images: GeneratedImage[]; cost: number }> {
  await moderateImagePrompt(call, {
    upstream: deps.ctx.config.gateway.moderationUpstream,
    logger: deps.ctx.logger,
  });
  const worstCase = imageCost(call.model, call.width, call.height, call.count);
  const { result, cost } = await deps.metering.call(meta, {
    worstCase, model: call.model.id, run: () => deps.providers.generateImage({ ...call, signal: meta.signal }),
    costOf: (r) => {
      if (r.images.length === 0) throw new AppError("upstream_error", "The image upstream returned no image.");
      // Billed per image delivered, at the size actually produced.
      return r.images.slice(0, call.count).reduce((sum, img) => sum + imageCost(call.model, img.width || call.width, img.height || call.height, 1), 0);
    },
    usageOf: (r) => {
      const delivered = r.images.slice(0, call.count);
      return {
        model: call.model.id, deployment: r.served.deploymentId, type: "image", images: delivered.length,
        // the decoded size: base64's `=` padding stands for no byte
        outputBytes: delivered.reduce((n, i) => n + (i.b64Json ? Buffer.byteLength(i.b64Json, "base64") : (i.url?.length ?? 0)), 0),
      };
    },
  });
  return { images: result.images.slice(0, call.count), cost };
}

export async function runTextToSpeech(
  deps: GatewayDeps,
  meta: RequestMeta,
  call: { model: ModelDefinition; text: string; voice: string; voiceSettings?: VoiceSettings; outputFormat?: string },
): Promise<{ audio: AudioResult; cost: number }> {
  const characters = characterCount(call.text);
  const price = characterCost(call.model, characters);
  // an unknown voice is a 400 whatever the balance: checked before the hold (a 402 would hide it)
  await deps.providers.checkVoice(call);
  const { result, cost } = await deps.metering.call(meta, {
    worstCase: price, model: call.model.id, run: () => deps.providers.textToSpeech({ ...call, signal: meta.signal }),
    costOf: (r) => {
      if (r.audio.length === 0) throw new AppError("upstream_error", "The speech upstream returned no audio.");
      return price;
    },
    usageOf: (r) => ({ model: call.model.id, deployment: r.served.deploymentId, type: "tts", characters, outputBytes: r.audio.length }),
  });
  return { audio: result, cost };
}

export interface UploadedAudio {
  data: Buffer;
  filename: string;
  contentType: string;
  /** sent without a type of its own (or as text/plain, the form default): only audio the gateway can read is taken */
  untyped: boolean;
  /** the form field it came in, named in errors (default `audio`) */
  field?: string;
}

/** Seconds of audio an upload declares (see declaredAudioSeconds); an untyped upload must be readable audio. */
async function uploadSeconds(audio: UploadedAudio): Promise<number | undefined> {
  const declared = await declaredAudioSeconds(audio.data, audio.untyped ? undefined : audio.contentType);
  if (audio.untyped && declared === undefined) {
    throw invalidParameter(audio.field ?? "audio", "must be an audio or video file: it was sent as text/plain (or without a type) and its bytes are not audio the gateway can read; declare its type (audio/…)");
  }
  return declared;
}

/**
 * Speech-to-speech: held on the upload's duration (as its container declares it, else estimated from its size),
 * settled to the duration upstream reports, else the declared one, else (audio whose length cannot be read, such as a
 * browser's WebM recording) the length of the converted audio, which keeps the input's timing, at most what was held:
 * the size estimate is a worst case, several times the length of audio at a usual bitrate.
 */
export async function runSpeechToSpeech(
  deps: GatewayDeps,
  meta: RequestMeta,
  call: { model: ModelDefinition; voice: string; audio: UploadedAudio; voiceSettings?: VoiceSettings; outputFormat?: string },
): Promise<{ audio: AudioResult; cost: number; seconds: number }> {
  const declared = await uploadSeconds(call.audio);
  const held = heldAudioSeconds(call.audio.data.length, declared);
  await deps.providers.checkVoice(call);
  let seconds = held;
  const convert = async () => {
    const converted = await deps.providers.speechToSpeech({ ...call, signal: meta.signal });
    const produced = declared === undefined ? await producedAudioSeconds(converted.audio, converted.contentType, call.outputFormat) : undefined;
    return { converted, produced };
  };
  const { result, cost } = await deps.metering.call(meta, {
    worstCase: audioCost(call.model, held), model: call.model.id, run: convert,
    costOf: ({ converted: r, produced }) => {
      if (r.audio.length === 0) throw new AppError("upstream_error", "The speech upstream returned no audio.");
      seconds = r.inputSeconds !== undefined && r.inputSeconds > 0 ? r.inputSeconds : declared ?? Math.min(produced ?? held, held);
      return audioCost(call.model, seconds);
    },
    usageOf: ({ converted: r }) => ({ model: call.model.id, deployment: r.served.deploymentId, type: "sts", audioSeconds: billedSeconds(seconds), outputBytes: r.audio.length }),
  });
  return { audio: result.converted, cost, seconds };
}

/**
 * Speech-to-text: held like speech-to-speech, settled to the audio's duration (CONTRACT 6 bills started seconds of
 * audio): the one upstream reports, else the one the container declares, else where the last timed word ends (a lower
 * bound: speech may stop before the audio does, so it counts only for audio whose length cannot be read, or whose
 * header declares less than was transcribed), else the minimum second. The duration billed, the minimum second
 * included, is the one returned.
 */
export async function runSpeechToText(
  deps: GatewayDeps,
  meta: RequestMeta,
  call: { model: ModelDefinition; audio: UploadedAudio; language?: string },
): Promise<{ transcription: TranscriptionResult; cost: number }> {
  const declared = await uploadSeconds(call.audio);
  const held = heldAudioSeconds(call.audio.data.length, declared);
  let seconds = 0;
  const { result, cost } = await deps.metering.call(meta, {
    worstCase: audioCost(call.model, held), model: call.model.id, run: () => deps.providers.speechToText({ ...call, signal: meta.signal }),
    costOf: (r) => {
      const reported = r.durationSeconds !== undefined && r.durationSeconds > 0 ? r.durationSeconds : undefined;
      // A transcript that runs past the declared length proves the header short (truncated or forged): bill what was heard.
      const heard = declared !== undefined && r.lastWordEndSeconds !== undefined ? Math.max(declared, r.lastWordEndSeconds) : declared ?? r.lastWordEndSeconds;
      seconds = reported ?? heard ?? MIN_BILLED_SECONDS;
      return audioCost(call.model, seconds);
    },
    usageOf: (r) => ({ model: call.model.id, deployment: r.served.deploymentId, type: "stt", audioSeconds: billedSeconds(seconds), outputBytes: Buffer.byteLength(r.text) }),
  });
  return { transcription: { ...result, durationSeconds: seconds }, cost };
}
