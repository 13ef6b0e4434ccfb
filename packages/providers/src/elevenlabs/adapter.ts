// ElevenLabs adapter: resolves voice names, then calls TTS / STS / STT through the shared client.
import type { EndpointResolver } from "../endpoint";
import { upstreamModelName } from "../endpoint";
import type { UpstreamClient } from "../http/upstream-client";
import type { AudioResult, SpeechRequest, SpeechToSpeechRequest, TranscriptionRequest, TranscriptionResult } from "../types";
import {
  buildSpeechToSpeechRequest, buildSpeechToTextRequest, buildTextToSpeechRequest, checkAudio, parseError,
  parseSpeechToTextResponse,
} from "./transform";
import type { VoiceDirectory } from "./voice-directory";

export interface SpeechAdapter {
  textToSpeech(req: SpeechRequest): Promise<AudioResult>;
  speechToSpeech(req: SpeechToSpeechRequest): Promise<AudioResult>;
  speechToText(req: TranscriptionRequest): Promise<TranscriptionResult>;
}

export function createElevenLabsAdapter(client: UpstreamClient, endpointFor: EndpointResolver, voices: VoiceDirectory): SpeechAdapter {
  return {
    async textToSpeech(req) {
      const endpoint = endpointFor(req.model);
      const voiceId = await voices.resolve(endpoint, req.voice);
      const built = buildTextToSpeechRequest(endpoint, upstreamModelName(req.model), voiceId, req);
      const audio = await client.bytes({ ...built, signal: req.signal, parseError });
      checkAudio(audio.contentType, audio.data);
      return { audio: audio.data, contentType: audio.contentType };
    },

    async speechToSpeech(req) {
      const endpoint = endpointFor(req.model);
      const voiceId = await voices.resolve(endpoint, req.voice);
      const built = buildSpeechToSpeechRequest(endpoint, upstreamModelName(req.model), voiceId, req);
      const audio = await client.bytes({ ...built, signal: req.signal, parseError });
      checkAudio(audio.contentType, audio.data);
      return { audio: audio.data, contentType: audio.contentType };
    },

    async speechToText(req) {
      const built = buildSpeechToTextRequest(endpointFor(req.model), upstreamModelName(req.model), req);
      return parseSpeechToTextResponse(await client.json({ ...built, signal: req.signal, parseError }));
    },
  };
}
