// Builds the ProviderGateway: one shared upstream client, one adapter per wire protocol, routing by model.protocol.
import type { Config, ModelDefinition, Protocol } from "@gw/config";
import { AppError, systemClock, type Clock } from "@gw/shared";
import { createAnthropicAdapter } from "./anthropic/adapter";
import { chatAsCompletion, completionAsChat } from "./completion-as-chat";
import { createElevenLabsAdapter, type SpeechAdapter } from "./elevenlabs/adapter";
import { DEFAULT_VOICE_TIMING, VoiceDirectory, type VoiceDirectoryTiming } from "./elevenlabs/voice-directory";
import { createFluxAdapter } from "./flux/adapter";
import { createHealthCheck } from "./health";
import { DEFAULT_RETRY_TIMING, type RetryPolicy } from "./http/retry-policy";
import { UpstreamClient } from "./http/upstream-client";
import { createOpenAiAdapter, type TextAdapter } from "./openai/adapter";
import { createOpenAiImagesAdapter, type ImageAdapter } from "./openai-images/adapter";
import { Router } from "./routing/router";
import type { Random } from "./routing/weighted-choice";
import { countTokens } from "./tokens";
import type { ChatStreamEvent, ProviderGateway, UpstreamAttempt } from "./types";

export interface ProviderGatewayOptions {
  /** backoff timing (tests shorten it); the retry count comes from config.upstream.maxRetries */
  retry?: Partial<Omit<RetryPolicy, "maxRetries">>;
  voices?: Partial<VoiceDirectoryTiming>;
  /** sockets kept per upstream origin */
  connectionsPerOrigin?: number;
  /** deployments' cooldowns and requests per minute (tests move a ManualClock) */
  clock?: Clock;
  /** the weighted choice of a deployment (tests pass seededRandom) */
  random?: Random;
  /** told of every attempt on a deployment: model, provider, deployment, outcome, duration (metrics) */
  onAttempt?: (attempt: UpstreamAttempt) => void;
}

const wrongKind = (model: ModelDefinition, what: string) =>
  new AppError("unsupported_model", `Model '${model.id}' does not support ${what}.`);

/**
 * Only textA's upstream speaks OpenAI's legacy completions API (CONTRACT 4); textC's speaks chat completions alone
 * (Mistral has no /v1/completions), so its /v1/completions go through chat, as Messages models' do.
 */
const hasCompletionsApi = (model: ModelDefinition): boolean => model.protocol === "openai" && model.provider !== "textC";

function pick<T>(adapters: Partial<Record<Protocol, T>>, model: ModelDefinition, what: string): T {
  const adapter = adapters[model.protocol];
  if (!adapter) throw wrongKind(model, what);
  return adapter;
}

export function createProviderGateway(config: Config, options: ProviderGatewayOptions = {}): ProviderGateway {
  const client = new UpstreamClient({
    connectTimeoutMs: config.upstream.connectTimeoutMs,
    requestTimeoutMs: config.upstream.requestTimeoutMs,
    retry: { ...DEFAULT_RETRY_TIMING, ...options.retry, maxRetries: config.upstream.maxRetries },
    connectionsPerOrigin: options.connectionsPerOrigin,
    maxResponseBytes: config.upstream.maxResponseBytes,
  });
  const router = new Router(config, { clock: options.clock ?? systemClock, random: options.random ?? Math.random, onAttempt: options.onAttempt });
  const endpointFor = router.endpointFor;
  const openai = createOpenAiAdapter(client, endpointFor);
  const text: Partial<Record<Protocol, TextAdapter>> = { openai, anthropic: createAnthropicAdapter(client, endpointFor) };
  const images: Partial<Record<Protocol, ImageAdapter>> = {
    "openai-images": createOpenAiImagesAdapter(client, endpointFor),
    flux: createFluxAdapter(client, endpointFor, { pollIntervalMs: config.upstream.fluxPollIntervalMs, timeoutMs: config.upstream.requestTimeoutMs }),
  };
  const voices = new VoiceDirectory(client, { ...DEFAULT_VOICE_TIMING, ...options.voices });
  const speech: Partial<Record<Protocol, SpeechAdapter>> = { elevenlabs: createElevenLabsAdapter(client, endpointFor, voices) };
  const checkHealth = createHealthCheck(client, config, endpointFor);
  async function* completionStream(req: Parameters<ProviderGateway["completionStream"]>[0]): AsyncGenerator<ChatStreamEvent> {
    if (hasCompletionsApi(req.model)) yield* openai.completionStream(req);
    else yield* pick(text, req.model, "completions").chatStream(completionAsChat(req));
  }

  const chat = (model: ModelDefinition, what: string) => pick(text, model, what);
  return {
    chat: async (req) => router.call(req.model, req.signal, true, (model) => chat(model, "chat").chat({ ...req, model })),
    // Lazy: routing and configuration errors surface on the first next(), like upstream errors do.
    chatStream: (req) => router.stream(req.model, req.signal, (model) => chat(model, "chat").chatStream({ ...req, model })),
    checkChat: (req) => pick(text, req.model, "chat").check?.(req),
    completion: async (req) => router.call(req.model, req.signal, true, async (model) => {
      if (hasCompletionsApi(model)) return openai.completion({ ...req, model });
      return chatAsCompletion(await chat(model, "completions").chat(completionAsChat({ ...req, model })));
    }),
    completionStream: (req) => router.stream(req.model, req.signal, (model) => completionStream({ ...req, model })),
    embeddings: async (req) => {
      if (req.model.protocol !== "openai") throw wrongKind(req.model, "embeddings");
      return router.call(req.model, req.signal, true, (model) => openai.embeddings({ ...req, model }));
    },
    // images and speech: the model's own deployments, no fallbacks (each model of those is priced by its own unit)
    generateImage: async (req) => router.call(req.model, req.signal, false, (model) => pick(images, model, "image generation").generateImage({ ...req, model })),
    checkVoice: async (req) => pick(speech, req.model, "text-to-speech").checkVoice(req),
    textToSpeech: async (req) => router.call(req.model, req.signal, false, (model) => pick(speech, model, "text-to-speech").textToSpeech({ ...req, model })),
    speechToSpeech: async (req) => router.call(req.model, req.signal, false, (model) => pick(speech, model, "speech-to-speech").speechToSpeech({ ...req, model })),
    speechToText: async (req) => router.call(req.model, req.signal, false, (model) => pick(speech, model, "speech-to-text").speechToText({ ...req, model })),
    modelChain: (model) => router.chain(model),
    deploymentStates: () => router.states(),
    countTokens,
    checkHealth,
    close: () => client.close(),
  };
}
