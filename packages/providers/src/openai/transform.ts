// OpenAI wire protocol (chat completions, completions, embeddings): pure request/response/stream transforms.
// Used for every OpenAI-compatible upstream (textA, textC).
import type { AppError } from "@gw/shared";
import type { Endpoint } from "../endpoint";
import type { SseEvent } from "../http/sse";
import { StreamFailure } from "../http/upstream-client";
import type { StreamPiece } from "../text-stream";
import type { z } from "zod";
import type { ChatChoice, ChatMessage, ChatRequest, ChatResult, CompletionRequest, CompletionResult, EmbeddingRequest } from "../types";
import { readErrorMessage, upstreamStatusError, wrongShape } from "../upstream-errors";
import { chatChunkSchema, chatResponseSchema, completionChunkSchema, completionResponseSchema, embeddingsResponseSchema, errorMessage } from "./schemas";

export interface BuiltRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

const headers = (endpoint: Endpoint): Record<string, string> => ({
  "content-type": "application/json",
  authorization: `Bearer ${endpoint.apiKey}`,
});

/** Our fields win over passed-through ones, so a client cannot redirect the model or the stream mode. */
function withPassthrough(passthrough: Record<string, unknown> | undefined, own: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = passthrough ? { ...passthrough } : {};
  for (const [key, value] of Object.entries(own)) if (value !== undefined) body[key] = value;
  return body;
}

/** The stream mode is ours too; a stream always asks for usage, so billing need not run the tokenizer over the answer. */
function withStreamMode(body: Record<string, unknown>, stream: boolean): Record<string, unknown> {
  if (stream) {
    body.stream = true;
    body.stream_options = { ...(body.stream_options as Record<string, unknown> | undefined), include_usage: true };
  } else {
    delete body.stream;
    delete body.stream_options;
  }
  return body;
}

export function buildChatRequest(endpoint: Endpoint, upstreamModel: string, req: ChatRequest, stream: boolean): BuiltRequest {
  const body = withPassthrough(req.passthrough, {
    model: upstreamModel,
    messages: req.wireMessages ?? req.messages.map(toWireMessage),
    [req.maxTokensField ?? "max_tokens"]: req.maxTokens,
    temperature: req.temperature,
    n: req.n !== undefined && req.n > 1 ? req.n : undefined,
  });
  return { url: `${endpoint.baseUrl}/v1/chat/completions`, headers: headers(endpoint), body: JSON.stringify(withStreamMode(body, stream)) };
}

/** A message the gateway built (task endpoint) in OpenAI's shape. */
function toWireMessage(m: ChatMessage): Record<string, unknown> {
  // an assistant turn that only called tools has content null, as OpenAI writes it (some compatible servers refuse "")
  const content = m.parts ?? (m.content === "" && m.toolCalls ? null : m.content);
  const out: Record<string, unknown> = { role: m.role, content };
  if (m.toolCalls) out.tool_calls = m.toolCalls;
  if (m.toolCallId !== undefined) out.tool_call_id = m.toolCallId;
  if (m.name !== undefined) out.name = m.name;
  return out;
}

/** Top-level answer fields passed on to the client as they came. */
const KEPT_FIELDS = ["system_fingerprint", "service_tier"] as const;

function keptFields(json: Record<string, unknown>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const key of KEPT_FIELDS) if (json[key] !== undefined) (out ??= {})[key] = json[key];
  return out;
}

/** Usage breakdowns passed on as they came: cached prompt tokens, reasoning tokens ... (the totals are ours) */
const USAGE_DETAIL_FIELDS = ["prompt_tokens_details", "completion_tokens_details"] as const;

export function usageDetailsOf(usage: Record<string, unknown> | null | undefined): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const key of USAGE_DETAIL_FIELDS) if (usage?.[key] != null) (out ??= {})[key] = usage[key];
  return out;
}

/** Usage may be missing (some compatible servers); the adapter then counts with the tokenizer. */
export interface PartialUsage {
  promptTokens?: number;
  completionTokens?: number;
}

type ParsedChoice = z.output<typeof chatResponseSchema>["choices"][number];

/** A choice as the client gets it: the message as the upstream wrote it (tool_calls, refusal, annotations ...), as the assistant's. */
function chatChoice(choice: ParsedChoice | undefined): ChatChoice {
  const message = { ...choice?.message, role: "assistant", content: choice?.message.content ?? null };
  const out: ChatChoice = { content: choice?.message.content ?? "", message, finishReason: choice?.finish_reason ?? "stop" };
  if (choice?.logprobs != null) out.logprobs = choice.logprobs;
  return out;
}

export function parseChatResponse(json: unknown): Omit<ChatResult, "usage"> & { usage: PartialUsage } {
  const parsed = chatResponseSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("chat completion");
  // in the order of their index (`n` answers), whatever order the upstream listed them in
  const choices = parsed.data.choices.map((c, i) => ({ c, i: typeof c.index === "number" ? c.index : i })).sort((a, b) => a.i - b.i).map(({ c }) => c);
  const result: Omit<ChatResult, "usage"> & { usage: PartialUsage } = {
    ...chatChoice(choices[0]),
    usage: { promptTokens: parsed.data.usage?.prompt_tokens, completionTokens: parsed.data.usage?.completion_tokens },
  };
  if (choices.length > 1) result.moreChoices = choices.slice(1).map(chatChoice);
  const fields = keptFields(parsed.data);
  if (fields) result.fields = fields;
  const usageDetails = usageDetailsOf(parsed.data.usage);
  if (usageDetails) result.usageDetails = usageDetails;
  return result;
}

/** The HTTP status each OpenAI error type stands for, so an error event in a stream is treated like that status. */
const ERROR_TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  rate_limit_error: 429,
  requests: 429,
  tokens: 429,
  server_error: 500,
};

/**
 * A stream's `data: {"error": {...}}` event (OpenAI and compatible servers report a failure after the 200 that way)
 * for the upstream client, which retries it like the status its type stands for (500 when unknown) as long as nothing
 * reached the client. Chunks are checked for the key's text first, so a normal chunk is not parsed twice.
 */
export function streamFailure(event: SseEvent): StreamFailure | undefined {
  if (!event.data.includes('"error"')) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(event.data);
  } catch {
    return undefined;
  }
  const error = typeof json === "object" && json !== null ? (json as { error?: unknown }).error : undefined;
  if (typeof error !== "object" || error === null) return undefined;
  const { type, message } = error as { type?: unknown; message?: unknown };
  const status = (typeof type === "string" ? ERROR_TYPE_STATUS[type] : undefined) ?? 500;
  return new StreamFailure(status, upstreamStatusError(status, typeof message === "string" ? message : undefined));
}

/** A stream event's JSON, or undefined for the end marker ([DONE]). */
function streamEventJson(event: SseEvent): unknown {
  if (event.data === "[DONE]") return undefined;
  let json: unknown;
  try {
    json = JSON.parse(event.data);
  } catch {
    throw wrongShape("stream");
  }
  // some servers report a failure mid-stream as a data event carrying an error object
  const message = errorMessage(json);
  if (message !== undefined) throw upstreamStatusError(502, typeof message === "string" ? message : undefined);
  return json;
}

/** A chunk's kept top-level fields (system_fingerprint, service_tier), which OpenAI repeats on every chunk. */
function fieldPieces(json: Record<string, unknown>): StreamPiece[] {
  const fields = keptFields(json);
  return fields ? [{ kind: "fields", fields }] : [];
}

function usagePieces(pieces: StreamPiece[], usage: { prompt_tokens: number; completion_tokens?: number } & Record<string, unknown> | null | undefined): StreamPiece[] {
  if (usage) pieces.push({ kind: "usage", promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, details: usageDetailsOf(usage) });
  return pieces;
}

export function parseChatStreamEvent(event: SseEvent): StreamPiece[] {
  const json = streamEventJson(event);
  if (json === undefined) return [{ kind: "end" }];
  const parsed = chatChunkSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("stream");
  const pieces = fieldPieces(parsed.data);
  // every choice of the chunk (`n` answers stream interleaved); a choice other than the first is marked by its index
  for (const [position, choice] of (parsed.data.choices ?? []).entries()) {
    const index = choice.index ?? position;
    const at = index === 0 ? {} : { index };
    const delta = choice.delta;
    const content = delta?.content ?? "";
    // a delta with more than text (tool_calls, refusal ...) or with logprobs is passed on whole
    const extra = delta ? Object.keys(delta).some((k) => k !== "content" && k !== "role" && delta[k] != null) : false;
    const logprobs = choice.logprobs ?? undefined;
    if (extra || logprobs !== undefined) {
      const { role: _role, ...rest } = delta ?? {};
      pieces.push({ kind: "delta", content, ...at, ...(extra ? { delta: { ...rest, content: delta?.content ?? null } } : {}), ...(logprobs !== undefined ? { logprobs } : {}) });
    } else if (content) pieces.push({ kind: "delta", content, ...at });
    if (choice.finish_reason) pieces.push({ kind: "finish", reason: choice.finish_reason, ...at });
  }
  return usagePieces(pieces, parsed.data.usage);
}

/** A legacy completions chunk: `choices[0].text`, its logprobs (passed on as they came) and finish reason, the usage chunk. */
export function parseCompletionStreamEvent(event: SseEvent): StreamPiece[] {
  const json = streamEventJson(event);
  if (json === undefined) return [{ kind: "end" }];
  const parsed = completionChunkSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("stream");
  const pieces = fieldPieces(parsed.data);
  const choice = parsed.data.choices?.[0];
  const text = choice?.text ?? "";
  const logprobs = choice?.logprobs ?? undefined;
  if (logprobs !== undefined) pieces.push({ kind: "delta", content: text, logprobs });
  else if (text) pieces.push({ kind: "delta", content: text });
  if (choice?.finish_reason) pieces.push({ kind: "finish", reason: choice.finish_reason });
  return usagePieces(pieces, parsed.data.usage);
}

export function buildCompletionRequest(endpoint: Endpoint, upstreamModel: string, req: CompletionRequest, stream = false): BuiltRequest {
  const body = withPassthrough(req.passthrough, {
    model: upstreamModel,
    prompt: req.prompt,
    max_tokens: req.maxTokens,
    temperature: req.temperature,
  });
  return { url: `${endpoint.baseUrl}/v1/completions`, headers: headers(endpoint), body: JSON.stringify(withStreamMode(body, stream)) };
}

export function parseCompletionResponse(json: unknown): Omit<CompletionResult, "usage"> & { usage: PartialUsage } {
  const parsed = completionResponseSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("completion");
  const choice = parsed.data.choices[0];
  const fields = keptFields(parsed.data);
  return {
    text: choice?.text ?? "",
    finishReason: choice?.finish_reason ?? "stop",
    ...(choice?.logprobs != null ? { logprobs: choice.logprobs } : {}),
    ...(fields ? { fields } : {}),
    usage: { promptTokens: parsed.data.usage?.prompt_tokens, completionTokens: parsed.data.usage?.completion_tokens },
  };
}

export function buildEmbeddingsRequest(endpoint: Endpoint, upstreamModel: string, req: EmbeddingRequest): BuiltRequest {
  // base64 float32 is smaller on the wire and faster to decode than JSON floats
  const body = withPassthrough(req.passthrough, { model: upstreamModel, input: req.input, encoding_format: "base64" });
  return { url: `${endpoint.baseUrl}/v1/embeddings`, headers: headers(endpoint), body: JSON.stringify(body) };
}

export function decodeBase64Floats(data: string): number[] {
  const bytes = Buffer.from(data, "base64");
  if (bytes.length % 4 !== 0) throw wrongShape("embeddings");
  const out = new Array<number>(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

export function parseEmbeddingsResponse(json: unknown, inputCount: number): { vectors: number[][]; promptTokens?: number } {
  const parsed = embeddingsResponseSchema.safeParse(json);
  if (!parsed.success || parsed.data.data.length !== inputCount) throw wrongShape("embeddings");
  const vectors = new Array<number[]>(inputCount);
  for (const item of parsed.data.data) {
    if (item.index >= inputCount) throw wrongShape("embeddings");
    vectors[item.index] = typeof item.embedding === "string" ? decodeBase64Floats(item.embedding) : item.embedding;
  }
  for (let i = 0; i < inputCount; i++) if (vectors[i] === undefined) throw wrongShape("embeddings");
  return { vectors, promptTokens: parsed.data.usage?.prompt_tokens };
}

export function parseError(status: number, body: string): AppError {
  return upstreamStatusError(status, readErrorMessage(body, errorMessage));
}
