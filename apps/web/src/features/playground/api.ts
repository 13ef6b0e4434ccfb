import { useQuery } from "@tanstack/react-query";
import type { ModelListEntry, PublicPricing } from "@gw/providers";
import { ApiError, isSessionLost, toApiError } from "../../lib/api-error";
import { apiFetch, apiRequest } from "../../lib/http";
import { notifySessionLost } from "../../lib/session-events";
import { readChatStream, type ChatStreamEvent } from "./sse";

/** A model as GET /v1/models lists it (CONTRACT 5), the fields the playground reads; `pricing` in dollars. */
export type ModelInfo = Pick<ModelListEntry, "id" | "type" | "owned_by" | "pricing">;

export function useModels() {
  return useQuery({
    queryKey: ["models"],
    queryFn: () => apiFetch<{ data: ModelInfo[] }>("/v1/models"),
    staleTime: 5 * 60_000,
  });
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

async function failFrom(res: Response): Promise<never> {
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  const err = toApiError(res.status, body);
  if (isSessionLost(err)) notifySessionLost(err.code);
  throw err;
}

/** Streams a chat answer with the session cookie (no pasted key): the gateway accepts the dashboard's session. */
export async function* streamChat(model: string, messages: ChatMessage[], signal: AbortSignal): AsyncGenerator<ChatStreamEvent> {
  let res: Response;
  try {
    res = await fetch("/v1/chat/completions", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ model, messages, stream: true, stream_options: { include_usage: true } }),
      signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError("network_error", "Network error", 0);
  }
  if (!res.ok || !res.body) {
    await failFrom(res);
    return;
  }
  yield* readChatStream(res.body);
}

export interface ImageResult {
  data: Array<{ url?: string; b64_json?: string }>;
}

export interface SpeechResult {
  audio: { url?: string; b64_json?: string };
}

/** X-Request-Cost (dollars): what the request was charged; null when the answer carries none. */
export function chargedCost(headers: Headers): number | null {
  const raw = headers.get("X-Request-Cost");
  const cost = raw === null || raw.trim() === "" ? NaN : Number(raw);
  return Number.isFinite(cost) ? cost : null;
}

/** A task's result and what it was charged (X-Request-Cost, null when absent). */
export async function runTask<T>(body: Record<string, unknown>, signal: AbortSignal): Promise<{ body: T; cost: number | null }> {
  try {
    const res = await apiRequest<T>("/api/v1/task", { method: "POST", body, signal });
    return { body: res.body, cost: chargedCost(res.headers) };
  } catch (err) {
    if (isSessionLost(err) && err instanceof ApiError) notifySessionLost(err.code);
    throw err;
  }
}

/** Dollars for one answer, from the model's listed prices; null when the model lists none for this unit. */
export function estimateCost(pricing: PublicPricing | undefined, usage: { promptTokens?: number; completionTokens?: number; images?: number; characters?: number }): number | null {
  if (!pricing) return null;
  let cost = 0;
  let known = false;
  if (usage.promptTokens !== undefined && pricing.input_per_1k_tokens !== undefined) {
    cost += (usage.promptTokens / 1000) * pricing.input_per_1k_tokens;
    known = true;
  }
  if (usage.completionTokens !== undefined && pricing.output_per_1k_tokens !== undefined) {
    cost += (usage.completionTokens / 1000) * pricing.output_per_1k_tokens;
    known = true;
  }
  if (usage.images !== undefined && pricing.image_standard !== undefined) {
    cost += usage.images * pricing.image_standard;
    known = true;
  }
  if (usage.characters !== undefined && pricing.per_1k_characters !== undefined) {
    cost += (usage.characters / 1000) * pricing.per_1k_characters;
    known = true;
  }
  return known ? cost : null;
}
