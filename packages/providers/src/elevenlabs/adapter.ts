// ElevenLabs adapter: resolves voice names, then calls TTS / STS / STT through the shared client.
import type { Endpoint, EndpointResolver } from "../endpoint";
import { upstreamModelName } from "../endpoint";
import type { UpstreamClient } from "../http/upstream-client";
import { requireAudio } from "../media-check";
import type { AudioResult, SpeechRequest, SpeechToSpeechRequest, TranscriptionRequest, TranscriptionResult } from "../types";
import {
  buildSpeechToSpeechRequest, buildSpeechToTextRequest, buildTextToSpeechRequest, parseError,
  parseSpeechToTextResponse, parseVoiceAudioError, VoiceNotFoundError, type BuiltSpeechRequest,
} from "./transform";
import { unknownVoice, type VoiceDirectory } from "./voice-directory";

export interface SpeechAdapter {
  /** Throws 400 invalid_parameter for a voice name the upstream does not have (the cached voices list). */
  checkVoice(req: Pick<SpeechRequest, "model" | "voice">): Promise<void>;
  textToSpeech(req: SpeechRequest): Promise<AudioResult>;
  speechToSpeech(req: SpeechToSpeechRequest): Promise<AudioResult>;
  speechToText(req: TranscriptionRequest): Promise<TranscriptionResult>;
}

export function createElevenLabsAdapter(client: UpstreamClient, endpointFor: EndpointResolver, voices: VoiceDirectory): SpeechAdapter {
  /**
   * Both voice endpoints: resolve the voice name, send, and check that audio came back. A voice the upstream no longer
   * has (deleted since the cached list was fetched) refetches the list: a name now listed under another id is sent
   * again, once; one no longer listed is the unknown voice's 400, as it would have been with a fresh list.
   */
  async function voiceAudio<R extends SpeechRequest | SpeechToSpeechRequest>(
    req: R,
    build: (endpoint: Endpoint, upstreamModel: string, voiceId: string, req: R) => BuiltSpeechRequest,
  ): Promise<AudioResult> {
    const endpoint = endpointFor(req.model);
    const send = async (voiceId: string): Promise<AudioResult> => {
      const audio = await client.bytes({ ...build(endpoint, upstreamModelName(req.model), voiceId, req), signal: req.signal, parseError: parseVoiceAudioError });
      requireAudio(audio.contentType, audio.data);
      return { audio: audio.data, contentType: audio.contentType };
    };
    const voiceId = await voices.resolve(endpoint, req.voice);
    try {
      return await send(voiceId);
    } catch (err) {
      if (!(err instanceof VoiceNotFoundError)) throw err;
    }
    voices.forget(endpoint);
    const current = await voices.resolve(endpoint, req.voice);
    try {
      if (current !== voiceId) return await send(current);
    } catch (err) {
      if (!(err instanceof VoiceNotFoundError)) throw err;
    }
    throw unknownVoice(req.voice);
  }

  return {
    async checkVoice(req) {
      await voices.resolve(endpointFor(req.model), req.voice);
    },
    textToSpeech: (req) => voiceAudio(req, buildTextToSpeechRequest),
    speechToSpeech: (req) => voiceAudio(req, buildSpeechToSpeechRequest),

    async speechToText(req) {
      const built = buildSpeechToTextRequest(endpointFor(req.model), upstreamModelName(req.model), req);
      return parseSpeechToTextResponse(await client.json({ ...built, signal: req.signal, parseError }));
    },
  };
}
