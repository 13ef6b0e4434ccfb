// The contract between the gateway routes and the upstream adapters. Adapters are pure transforms around one
// shared HTTP client (see STYLE.md); the gateway sees only these normalized shapes. Billing reads only `usage`.
import type { CancelSignal } from "@gw/shared";
import type { ModelDefinition, ProviderName } from "@gw/config";

/** CONTRACT 13: the model (the one asked for, or a fallback) and the deployment that produced an answer. */
export interface Served {
  model: ModelDefinition;
  /** the deployment's id in the models config; `default` for a model without a `deployments` list */
  deploymentId: string;
  provider: ProviderName;
}

/** A result together with who produced it. */
export type Routed<T> = T & { served: Served };

/** One call sent to one deployment, as told to ProviderGatewayOptions.onAttempt (metrics). */
export interface UpstreamAttempt {
  model: string;
  provider: ProviderName;
  deployment: string;
  outcome: "success" | "error";
  /** the AppError code of a failed attempt */
  code?: string;
  durationMs: number;
}

/** One deployment as /api/status/external shows it: never an upstream's error text. */
export interface DeploymentState {
  model: string;
  deployment: string;
  status: "healthy" | "cooling_down" | "rate_limited";
  /** ISO 8601, while cooling down */
  coolingUntil?: string;
}

/** A function call the model asked for (OpenAI's `tool_calls` item). */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * A message as the gateway reads it: its text (text parts joined; "" when there is none) and the tool-call
 * fields. OpenAI-protocol upstreams get the client's own message objects instead (ChatRequest.wireMessages).
 */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** when the content was an array: every part (text, image_url, input_audio, file ...) as sent, in order */
  parts?: Record<string, unknown>[];
  /** assistant: the calls it made */
  toolCalls?: ToolCall[];
  /** tool: the call this message answers */
  toolCallId?: string;
  name?: string;
}

export interface TextUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface ChatRequest {
  model: ModelDefinition;
  messages: ChatMessage[];
  maxTokens?: number;
  /**
   * The name OpenAI-protocol upstreams get `maxTokens` under: the client's own, so `max_completion_tokens` (the only
   * one OpenAI's reasoning models accept) stays that; `max_tokens` when unset.
   */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  temperature?: number;
  /** how many answers (OpenAI's `n`); more than one is never streamed */
  n?: number;
  /** the messages exactly as the client sent them (validated): what OpenAI-compatible upstreams receive */
  wireMessages?: readonly unknown[];
  /** unknown OpenAI fields passed through to OpenAI-compatible upstreams untouched */
  passthrough?: Record<string, unknown>;
  /** aborted when the client disconnects */
  signal: CancelSignal;
}

export interface ChatResult {
  /** the answer's text ("" when it has none, e.g. only tool calls): what output bytes and token counts read */
  content: string;
  /** the assistant message in OpenAI's shape (content null when there is no text, tool_calls, refusal ...) */
  message: Record<string, unknown>;
  finishReason: string;
  /** the stop sequence that ended the answer, when the upstream names it (Messages' `stop_sequence`) */
  stopSequence?: string;
  /** OpenAI's choice `logprobs`, when the upstream sent them */
  logprobs?: unknown;
  /** other top-level answer fields worth keeping (system_fingerprint, service_tier) */
  fields?: Record<string, unknown>;
  usage: TextUsage;
  /** the upstream's usage breakdown (OpenAI's prompt_tokens_details, completion_tokens_details), passed on as it came */
  usageDetails?: Record<string, unknown>;
  /** the answers after the first when `n` asked for several (choices 1..n-1, in order) */
  moreChoices?: ChatChoice[];
}

/** One answer of a chat call with `n` above 1. */
export type ChatChoice = Pick<ChatResult, "content" | "message" | "finishReason" | "logprobs">;

/**
 * A stream's errors are thrown from its iterator: before the first event they are plain AppErrors (nothing was
 * produced); after output began they are StreamInterruptedError (text-stream.ts) carrying the usage produced so far.
 */
export type ChatStreamEvent = (
  /** `delta`: the upstream's delta in OpenAI's shape when it carries more than text (tool_calls, refusal ...) */
  /** `index`: the choice (of `n`) the delta belongs to, when not the first */
  | { type: "delta"; content: string; delta?: Record<string, unknown>; logprobs?: unknown; index?: number; fields?: Record<string, unknown> }
  /**
   * always the last event of a successful stream; usage counted with a tokenizer when upstream sent none;
   * `moreFinishReasons`: those of the choices after the first, when `n` asked for several
   */
  | { type: "done"; finishReason: string; stopSequence?: string; usage: TextUsage; moreFinishReasons?: string[]; usageDetails?: Record<string, unknown>; fields?: Record<string, unknown> }
) & {
  /** set on every event the ProviderGateway yields: the model and deployment producing the stream */
  served?: Served;
};

export interface CompletionRequest {
  model: ModelDefinition;
  prompt: string;
  maxTokens?: number;
  temperature?: number;
  passthrough?: Record<string, unknown>;
  signal: CancelSignal;
}

export interface CompletionResult {
  text: string;
  finishReason: string;
  logprobs?: unknown;
  /** other top-level answer fields worth keeping (system_fingerprint, service_tier), as on chat answers */
  fields?: Record<string, unknown>;
  usage: TextUsage;
}

/** Texts, or token-id arrays (OpenAI-protocol upstreams take either as `input`). */
export type EmbeddingInput = string[] | number[][];

export interface EmbeddingRequest {
  model: ModelDefinition;
  input: EmbeddingInput;
  /** other OpenAI fields (dimensions, user ...), passed through untouched */
  passthrough?: Record<string, unknown>;
  signal: CancelSignal;
}

export interface EmbeddingResult {
  /** one float vector per input, in order */
  vectors: number[][];
  usage: { promptTokens: number };
}

export interface ImageRequest {
  model: ModelDefinition;
  /** sent upstream instead of the model's own name (image endpoint A's requested version) */
  upstreamModel?: string;
  prompt: string;
  width: number;
  height: number;
  count: number;
  /** imageA: style preset; imageB: style */
  style?: string;
  negativePrompt?: string;
  seed?: number;
  steps?: number;
  guidanceScale?: number;
  /** "url" (default) or "b64_json": openai-images asks upstream for that form; flux keeps the URL and also downloads the image data */
  responseFormat?: "url" | "b64_json";
  signal: CancelSignal;
}

export interface GeneratedImage {
  url?: string;
  b64Json?: string;
  width: number;
  height: number;
  seed?: number;
}

export interface ImageResult {
  images: GeneratedImage[];
}

/** ElevenLabs' voice settings; a field left out keeps the voice's own (OpenAI's speech route sends `speed` alone). */
export interface VoiceSettings {
  stability?: number;
  similarity_boost?: number;
  style?: number;
  use_speaker_boost?: boolean;
  speed?: number;
}

export interface SpeechRequest {
  model: ModelDefinition;
  /** a voice name; resolved to the upstream voice id (unknown name: AppError invalid_parameter) */
  voice: string;
  text: string;
  voiceSettings?: VoiceSettings;
  outputFormat?: string;
  signal: CancelSignal;
}

export interface SpeechToSpeechRequest {
  model: ModelDefinition;
  voice: string;
  audio: { data: Buffer; filename: string; contentType: string };
  voiceSettings?: VoiceSettings;
  outputFormat?: string;
  signal: CancelSignal;
}

export interface AudioResult {
  audio: Buffer;
  contentType: string;
  /** seconds of input audio (speech-to-speech), when known */
  inputSeconds?: number;
}

export interface TranscriptionRequest {
  model: ModelDefinition;
  audio: { data: Buffer; filename: string; contentType: string };
  /** the spoken language (ISO 639-1 or -3), when the caller knows it */
  language?: string;
  signal: CancelSignal;
}

export interface TranscriptionResult {
  text: string;
  /** the audio's length, when the upstream reports it */
  durationSeconds?: number;
  /** where the last timed word ends: a lower bound of the length (speech may stop before the audio does) */
  lastWordEndSeconds?: number;
  /** the timed words, when the upstream reports them (subtitles and verbose transcripts are cut from them) */
  words?: TimedWord[];
  /** the language the upstream detected (or was told) */
  language?: string;
}

export interface TimedWord {
  word: string;
  start: number;
  end: number;
}

/**
 * What the gateway calls. Errors are AppError from @gw/shared: upstream_error (502, after retries),
 * upstream_timeout (504), provider_not_configured (503), invalid_parameter (400, e.g. unknown voice).
 * Retries (429/5xx/connection errors, bounded, with backoff) happen inside, never after the first
 * byte of a stream was handed to the caller; then (CONTRACT 13) the call moves to the model's other deployments and
 * (text and embeddings) to its fallbacks. Every result names the model and deployment that served it (`served`).
 */
export interface ProviderGateway {
  chat(req: ChatRequest): Promise<Routed<ChatResult>>;
  chatStream(req: ChatRequest): AsyncIterable<ChatStreamEvent>;
  /** Throws the model's protocol's 400s for this request (fields it has no form for) without calling upstream. */
  checkChat(req: ChatRequest): void;
  completion(req: CompletionRequest): Promise<Routed<CompletionResult>>;
  /** A completion streamed, as text deltas (Messages models: the chat stream of completionAsChat); errors as chatStream's. */
  completionStream(req: CompletionRequest): AsyncIterable<ChatStreamEvent>;
  embeddings(req: EmbeddingRequest): Promise<Routed<EmbeddingResult>>;
  generateImage(req: ImageRequest): Promise<Routed<ImageResult>>;
  /** Throws 400 invalid_parameter for an unknown voice name (cached voices list), before anything is held or sent. */
  checkVoice(req: Pick<SpeechRequest, "model" | "voice">): Promise<void>;
  textToSpeech(req: SpeechRequest): Promise<Routed<AudioResult>>;
  speechToSpeech(req: SpeechToSpeechRequest): Promise<Routed<AudioResult>>;
  speechToText(req: TranscriptionRequest): Promise<Routed<TranscriptionResult>>;
  /** counts tokens the way billing does when upstream reports none */
  countTokens(text: string): number;
  /** cheap reachability check of a provider for /api/status/external */
  checkHealth(provider: "text" | "speech", timeoutMs: number, slowMs?: number): Promise<{ status: "healthy" | "degraded" | "unhealthy" | "unknown"; responseTimeMs: number; issue?: string }>;
  /** The model and then its fallbacks: the models that may serve a text or embeddings call to it (the hold covers the dearest). */
  modelChain(model: ModelDefinition): ModelDefinition[];
  /** Every configured deployment's state (/api/status/external). */
  deploymentStates(): DeploymentState[];
  /** reads config.models again after the catalog changed at run time (deployments, fallbacks, upstream names) */
  reloadCatalog(): void;
  close(): Promise<void>;
}
