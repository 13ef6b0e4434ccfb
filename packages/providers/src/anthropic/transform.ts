// Anthropic Messages protocol (textB): pure request/response/stream transforms.
import type { AppError } from "@gw/shared";
import type { Endpoint } from "../endpoint";
import type { SseEvent } from "../http/sse";
import type { StreamPiece } from "../text-stream";
import type { ChatRequest, ChatResult } from "../types";
import { readErrorMessage, upstreamStatusError, wrongShape } from "../upstream-errors";
import type { BuiltRequest } from "../openai/transform";
import { errorMessage, messageResponseSchema, streamEventSchema } from "./schemas";

export const ANTHROPIC_VERSION = "2023-06-01";
/** Messages requires max_tokens; used when neither the request nor the model sets one. */
export const DEFAULT_MAX_TOKENS = 4096;

/** OpenAI finish reasons, which is what our clients read. */
const FINISH_REASONS: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};
export const toFinishReason = (stopReason: string | null | undefined): string =>
  (stopReason ? FINISH_REASONS[stopReason] : undefined) ?? "stop";

export function buildMessagesRequest(endpoint: Endpoint, upstreamModel: string, req: ChatRequest, stream: boolean, defaultMaxTokens: number): BuiltRequest {
  // Messages takes the system prompt as a field of its own, not as a message.
  const system = req.messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
  const messages = req.messages.filter((m) => m.role !== "system").map((m) => ({ role: m.role, content: m.content }));
  const body: Record<string, unknown> = { model: upstreamModel, max_tokens: req.maxTokens ?? defaultMaxTokens, messages };
  if (system) body.system = system;
  // Anthropic's range is 0..1 where OpenAI's is 0..2: clamp rather than reject a valid OpenAI value.
  if (req.temperature !== undefined) body.temperature = Math.min(req.temperature, 1);
  const topP = req.passthrough?.top_p;
  if (typeof topP === "number") body.top_p = topP;
  const stop = req.passthrough?.stop;
  if (typeof stop === "string") body.stop_sequences = [stop];
  else if (Array.isArray(stop)) body.stop_sequences = stop.filter((s) => typeof s === "string");
  if (stream) body.stream = true;
  return {
    url: `${endpoint.baseUrl}/v1/messages`,
    headers: { "content-type": "application/json", "x-api-key": endpoint.apiKey, "anthropic-version": ANTHROPIC_VERSION },
    body: JSON.stringify(body),
  };
}

export function parseMessagesResponse(json: unknown): ChatResult {
  const parsed = messageResponseSchema.safeParse(json);
  if (!parsed.success || !parsed.data.usage) throw wrongShape("messages");
  const content = parsed.data.content.map((block) => (block.type === "text" ? block.text ?? "" : "")).join("");
  return {
    content,
    finishReason: toFinishReason(parsed.data.stop_reason),
    usage: { promptTokens: parsed.data.usage.input_tokens, completionTokens: parsed.data.usage.output_tokens },
  };
}

export function parseMessagesStreamEvent(event: SseEvent): StreamPiece[] {
  let json: unknown;
  try {
    json = JSON.parse(event.data);
  } catch {
    throw wrongShape("stream");
  }
  const parsed = streamEventSchema.safeParse(json);
  if (!parsed.success) {
    // New event types are announced as additive; skip them rather than fail a paying request.
    if (typeof json === "object" && json !== null && typeof (json as { type?: unknown }).type === "string") return [];
    throw wrongShape("stream");
  }
  const data = parsed.data;
  switch (data.type) {
    case "message_start":
      return [{ kind: "usage", promptTokens: data.message.usage?.input_tokens, completionTokens: undefined }];
    case "content_block_delta":
      return data.delta.type === "text_delta" && data.delta.text ? [{ kind: "delta", content: data.delta.text }] : [];
    case "message_delta": {
      const pieces: StreamPiece[] = [];
      if (data.delta.stop_reason) pieces.push({ kind: "finish", reason: toFinishReason(data.delta.stop_reason) });
      // message_delta's output_tokens is cumulative
      if (data.usage?.output_tokens !== undefined) pieces.push({ kind: "usage", completionTokens: data.usage.output_tokens, promptTokens: data.usage.input_tokens ?? undefined });
      return pieces;
    }
    case "message_stop":
      return [{ kind: "end" }];
    case "error":
      throw upstreamStatusError(502, data.error.message);
    default:
      return [];
  }
}

export function parseError(status: number, body: string): AppError {
  return upstreamStatusError(status, readErrorMessage(body, errorMessage));
}
