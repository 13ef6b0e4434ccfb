// Builds the ProviderGateway: one shared upstream client, one adapter per wire protocol, routing by model.protocol.
import type { Config, ModelDefinition, Protocol } from "@gw/config";
import { AppError } from "@gw/shared";
import { createAnthropicAdapter } from "./anthropic/adapter";
import { chatAsCompletion, completionAsChat } from "./completion-as-chat";
import { createElevenLabsAdapter, type SpeechAdapter } from "./elevenlabs/adapter";
import { DEFAULT_VOICE_TIMING, VoiceDirectory, type VoiceDirectoryTiming } from "./elevenlabs/voice-directory";
import { createEndpointResolver } from "./endpoint";
import { createFluxAdapter } from "./flux/adapter";
import { createHealthCheck } from "./health";
import { DEFAULT_RETRY_TIMING, type RetryPolicy } from "./http/retry-policy";
import { UpstreamClient } from "./http/upstream-client";
import { createOpenAiAdapter, type TextAdapter } from "./openai/adapter";
import { createOpenAiImagesAdapter, type ImageAdapter } from "./openai-images/adapter";
import { countTokens } from "./tokens";
import type { ChatRequest, ChatResult, ChatStreamEvent, ProviderGateway } from "./types";

export interface ProviderGatewayOptions {
  /** backoff timing (tests shorten it); the retry count comes from config.upstream.maxRetries */
  retry?: Partial<Omit<RetryPolicy, "maxRetries">>;
  voices?: Partial<VoiceDirectoryTiming>;
  /** sockets kept per upstream origin */
  connectionsPerOrigin?: number;
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

export function createProviderGateway(config: Config, options: ProviderGatewayOptions = {}): ProviderGateway {
  const client = new UpstreamClient({
    connectTimeoutMs: config.upstream.connectTimeoutMs,
    requestTimeoutMs: config.upstream.requestTimeoutMs,
    retry: { ...DEFAULT_RETRY_TIMING, ...options.retry, maxRetries: config.upstream.maxRetries },
    connectionsPerOrigin: options.connectionsPerOrigin,
    maxResponseBytes: config.upstream.maxResponseBytes,
  });
  const endpointFor = createEndpointResolver(config);
  const openai = createOpenAiAdapter(client, endpointFor);
  const text: Partial<Record<Protocol, TextAdapter>> = { openai, anthropic: createAnthropicAdapter(client, endpointFor) };
  const images: Partial<Record<Protocol, ImageAdapter>> = {
    "openai-images": createOpenAiImagesAdapter(client, endpointFor),
    flux: createFluxAdapter(client, endpointFor, { pollIntervalMs: config.upstream.fluxPollIntervalMs, timeoutMs: config.upstream.requestTimeoutMs }),
  };
  const voices = new VoiceDirectory(client, { ...DEFAULT_VOICE_TIMING, ...options.voices });
  const speech: Partial<Record<Protocol, SpeechAdapter>> = { elevenlabs: createElevenLabsAdapter(client, endpointFor, voices) };
  const checkHealth = createHealthCheck(client, config, endpointFor);

  return {
    chat: async (req) => {
      const adapter = pick(text, req.model, "chat");
      if (req.n !== undefined && req.n > 1 && !answersNChoicesAtOnce(req.model)) return chatPerChoice(adapter, req, req.n);
      return adapter.chat(req);
    },
    // Lazy: routing and configuration errors surface on the first next(), like upstream errors do.
    async *chatStream(req): AsyncGenerator<ChatStreamEvent> {
      yield* pick(text, req.model, "chat").chatStream(req);
    },
    checkChat: (req) => pick(text, req.model, "chat").check?.(req),
    completion: async (req) => {
      if (hasCompletionsApi(req.model)) return openai.completion(req);
      return chatAsCompletion(await pick(text, req.model, "completions").chat(completionAsChat(req)));
    },
    async *completionStream(req): AsyncGenerator<ChatStreamEvent> {
      if (hasCompletionsApi(req.model)) yield* openai.completionStream(req);
      else yield* pick(text, req.model, "completions").chatStream(completionAsChat(req));
    },
    embeddings: async (req) => {
      if (req.model.protocol !== "openai") throw wrongKind(req.model, "embeddings");
      return openai.embeddings(req);
    },
    generateImage: async (req) => pick(images, req.model, "image generation").generateImage(req),
    checkVoice: async (req) => pick(speech, req.model, "text-to-speech").checkVoice(req),
    textToSpeech: async (req) => pick(speech, req.model, "text-to-speech").textToSpeech(req),
    speechToSpeech: async (req) => pick(speech, req.model, "speech-to-speech").speechToSpeech(req),
    speechToText: async (req) => pick(speech, req.model, "speech-to-text").speechToText(req),
    countTokens,
    checkHealth,
    close: () => client.close(),
  };
}
