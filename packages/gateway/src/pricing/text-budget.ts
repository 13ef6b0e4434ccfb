// The worst case of a text call, before the upstream reports its usage: the prompt as counted and the completion
// budget within the model's output cap and context window (CONTRACT 6).
import type { ModelDefinition } from "@gw/config";
import { countToolCallTokens, type ChatMessage, type ProviderGateway } from "@gw/providers";
import { invalidParameter } from "@gw/shared";
import { IMAGE_PART_TOKENS, TOKENS_PER_MESSAGE, TOKENS_PER_REPLY } from "./pricing";

/** The gateway's tokenizer (the providers' count of a text). */
export interface Tokenizer {
  providers: Pick<ProviderGateway, "countTokens">;
}

/**
 * The prompt as the hold sizes it: every message's text and tool-call fields, and the tool definitions the
 * request offers (sent to the model as part of its prompt). An image part counts IMAGE_PART_TOKENS, the least an
 * image costs; other parts (audio, files) count nothing here. The upstream's reported usage settles them all.
 */
export function countPromptTokens(deps: Tokenizer, call: { messages: readonly ChatMessage[]; passthrough?: Record<string, unknown> }): number {
  let tokens = TOKENS_PER_REPLY;
  for (const m of call.messages) {
    tokens += TOKENS_PER_MESSAGE + deps.providers.countTokens(m.content) + (m.toolCalls || m.toolCallId || m.name ? countToolCallTokens(m) : 0);
    for (const part of m.parts ?? []) if (part.type === "image_url") tokens += IMAGE_PART_TOKENS;
  }
  const tools = call.passthrough?.tools ?? call.passthrough?.functions;
  if (tools !== undefined) tokens += deps.providers.countTokens(JSON.stringify(tools));
  return tokens;
}

/**
 * The completion budget: `max_tokens` (at most the model's cap) or the cap itself, within the context window.
 * `promptParam` is the field holding the prompt, named when the prompt alone overflows the window.
 */
export function completionBudget(model: ModelDefinition, promptTokens: number, maxTokens: number | undefined, param = "max_tokens", promptParam = "messages"): number {
  const cap = model.maxOutputTokens ?? 4096;
  if (maxTokens !== undefined && maxTokens > cap) throw invalidParameter(param, `must be at most ${cap} for model '${model.id}'`);
  const window = model.contextWindow;
  if (window !== undefined && promptTokens >= window) {
    throw invalidParameter(promptParam, `the prompt has about ${promptTokens} tokens, more than the ${window}-token context window of '${model.id}'`);
  }
  if (window !== undefined && maxTokens !== undefined && promptTokens + maxTokens > window) {
    throw invalidParameter(param, `prompt (about ${promptTokens} tokens) plus ${param} exceeds the ${window}-token context window of '${model.id}'`);
  }
  return maxTokens ?? (window !== undefined ? Math.min(cap, window - promptTokens) : cap);
}

/**
 * A completions prompt, tokenized once (it may be a megabyte), its `suffix` included (the upstream's prompt tokens
 * count it too): `tokens` alone for the context window (the completions API has no framing, so `max_tokens` =
 * window - prompt fits there) and a cut stream's charge; `held`, with the reply's framing as slack, for the hold.
 */
export function completionPromptTokens(deps: Tokenizer, prompt: string, suffix?: string): { tokens: number; held: number } {
  const tokens = deps.providers.countTokens(prompt) + (suffix ? deps.providers.countTokens(suffix) : 0);
  return { tokens, held: tokens + TOKENS_PER_REPLY };
}
