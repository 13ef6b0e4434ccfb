// Builds the ProviderGateway: one shared upstream client, one adapter per wire protocol, routing by model.protocol.
import type { Config, ModelDefinition, Protocol } from "@gw/config";
import { AppError, systemClock, type Clock } from "@gw/shared";
import { createAnthropicAdapter } from "./anthropic/adapter";
import { chatAsCompletion, completionAsChat } from "./completion-as-chat";
import { createElevenLabsAdapter, type SpeechAdapter } from "./elevenlabs/adapter";
import { DEFAULT_VOICE_TIMING, VoiceDirectory, type VoiceDirectoryTiming } from "./elevenlabs/voice-directory";
import { createFluxAdapter, type FluxTiming } from "./flux/adapter";
import type { EndpointResolver } from "./endpoint";
import { createHealthCheck } from "./health";
import { DEFAULT_RETRY_TIMING, type RetryPolicy } from "./http/retry-policy";
import { UpstreamClient } from "./http/upstream-client";
import { createOpenAiAdapter, type OpenAiAdapter, type TextAdapter } from "./openai/adapter";
import { createOpenAiImagesAdapter, type ImageAdapter } from "./openai-images/adapter";
import { Router } from "./routing/router";
import type { Random } from "./routing/weighted-choice";
import { countTokens } from "./tokens";
import type { ChatRequest, ChatResult, ChatStreamEvent, ProviderGateway, UpstreamAttempt } from "./types";

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

/** Only the OpenAI protocol answers `n` choices in one call; the others are asked once per choice. */
export const answersNChoicesAtOnce = (model: ModelDefinition): boolean => model.protocol === "openai";

/**
 * `n` answers from a protocol without `n` (Messages): n calls in parallel, the first failure failing the request
 * (nothing is charged for a failed request), their usage summed, which is what the upstream bills.
 */
async function chatPerChoice(adapter: TextAdapter, req: ChatRequest, n: number): Promise<ChatResult> {
  const answers = await Promise.all(Array.from({ length: n }, () => adapter.chat({ ...req, n: undefined })));
  const [first, ...rest] = answers as [ChatResult, ...ChatResult[]];
  return {
    ...first,
    moreChoices: rest.map(({ content, message, finishReason, logprobs }) => ({ content, message, finishReason, logprobs })),
    usage: {
      promptTokens: answers.reduce((sum, a) => sum + a.usage.promptTokens, 0),
      completionTokens: answers.reduce((sum, a) => sum + a.usage.completionTokens, 0),
    },
  };
}

function pick<T>(adapters: Partial<Record<Protocol, T>>, model: ModelDefinition, what: string): T {
  const adapter = adapters[model.protocol];
  if (!adapter) throw wrongKind(model, what);
  return adapter;
}

/** One adapter per wire protocol, on one upstream client. */
interface Adapters {
  openai: OpenAiAdapter;
  text: Partial<Record<Protocol, TextAdapter>>;
  images: Partial<Record<Protocol, ImageAdapter>>;
  speech: Partial<Record<Protocol, SpeechAdapter>>;
}

function createAdapters(client: UpstreamClient, endpointFor: EndpointResolver, voices: VoiceDirectory, fluxTiming: FluxTiming): Adapters {
  const openai = createOpenAiAdapter(client, endpointFor);
  return {
    openai,
    text: { openai, anthropic: createAnthropicAdapter(client, endpointFor) },
    images: { "openai-images": createOpenAiImagesAdapter(client, endpointFor), flux: createFluxAdapter(client, endpointFor, fluxTiming) },
    speech: { elevenlabs: createElevenLabsAdapter(client, endpointFor, voices) },
  };
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
  const voices = new VoiceDirectory(client, { ...DEFAULT_VOICE_TIMING, ...options.voices });
  const fluxTiming = { pollIntervalMs: config.upstream.fluxPollIntervalMs, timeoutMs: config.upstream.requestTimeoutMs };
  // a call with another deployment to go to moves there at its first failure (CONTRACT 13): adapters without retries
  const adapters = { retrying: createAdapters(client, endpointFor, voices, fluxTiming), single: createAdapters(client.singleAttempt(), endpointFor, voices, fluxTiming) };
  const on = (retries: boolean): Adapters => (retries ? adapters.retrying : adapters.single);
  const { text, speech } = adapters.retrying;
  const checkHealth = createHealthCheck(client, config, endpointFor);
  async function* completionStream(a: Adapters, req: Parameters<ProviderGateway["completionStream"]>[0]): AsyncGenerator<ChatStreamEvent> {
    if (hasCompletionsApi(req.model)) yield* a.openai.completionStream(req);
    else yield* pick(a.text, req.model, "completions").chatStream(completionAsChat(req));
  }

  return {
    chat: async (req) => router.call(req.model, req.signal, true, (model, retries) => {
      const adapter = pick(on(retries).text, model, "chat");
      const request = { ...req, model };
      if (req.n !== undefined && req.n > 1 && !answersNChoicesAtOnce(model)) return chatPerChoice(adapter, request, req.n);
      return adapter.chat(request);
    }),
    // Lazy: routing and configuration errors surface on the first next(), like upstream errors do.
    chatStream: (req) => router.stream(req.model, req.signal, (model, retries) => pick(on(retries).text, model, "chat").chatStream({ ...req, model })),
    checkChat: (req) => pick(text, req.model, "chat").check?.(req),
    completion: async (req) => router.call(req.model, req.signal, true, async (model, retries) => {
      const a = on(retries);
      if (hasCompletionsApi(model)) return a.openai.completion({ ...req, model });
      return chatAsCompletion(await pick(a.text, model, "completions").chat(completionAsChat({ ...req, model })));
    }),
    completionStream: (req) => router.stream(req.model, req.signal, (model, retries) => completionStream(on(retries), { ...req, model })),
    embeddings: async (req) => {
      if (req.model.protocol !== "openai") throw wrongKind(req.model, "embeddings");
      return router.call(req.model, req.signal, true, (model, retries) => on(retries).openai.embeddings({ ...req, model }));
    },
    // images and speech: the model's own deployments, no fallbacks (each model of those is priced by its own unit)
    generateImage: async (req) => router.call(req.model, req.signal, false, (model, retries) => pick(on(retries).images, model, "image generation").generateImage({ ...req, model })),
    checkVoice: async (req) => pick(speech, req.model, "text-to-speech").checkVoice(req),
    textToSpeech: async (req) => router.call(req.model, req.signal, false, (model, retries) => pick(on(retries).speech, model, "text-to-speech").textToSpeech({ ...req, model })),
    speechToSpeech: async (req) => router.call(req.model, req.signal, false, (model, retries) => pick(on(retries).speech, model, "speech-to-speech").speechToSpeech({ ...req, model })),
    speechToText: async (req) => router.call(req.model, req.signal, false, (model, retries) => pick(on(retries).speech, model, "speech-to-text").speechToText({ ...req, model })),
    modelChain: (model) => router.chain(model),
    deploymentStates: () => router.states(),
    reloadCatalog: () => router.reload(config),
    countTokens,
    checkHealth,
    close: () => client.close(),
  };
}
