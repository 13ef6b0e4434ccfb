// /v1/completions for a model whose upstream has no completions API (Messages, textB; textC's chat-only upstream): the
// prompt is sent as one user message and the answer's text comes back as the completion. Pure transforms.
import { invalidParameter } from "@gw/shared";
import type { ChatRequest, ChatResult, CompletionRequest, CompletionResult } from "./types";

/** OpenAI's completions answer at most this many tokens when `max_tokens` is unset; the same here. */
export const COMPLETION_DEFAULT_MAX_TOKENS = 16;

/** Chat's fields for offering tools (and the legacy functions), which the completions API has not. */
const CHAT_TOOL_FIELDS = new Set(["tools", "tool_choice", "parallel_tool_calls", "functions", "function_call"]);

/**
 * The completions fields a chat answer cannot honour are refused, naming them (dropped, the client would wait for
 * log probabilities, an echoed prompt or a suffix that never come); the rest is read as chat passthrough, except
 * chat's tool fields: a completion is text, so the model is offered no tools (its answer would be a call, no text).
 */
export function completionAsChat(req: CompletionRequest): ChatRequest {
  const { logprobs, echo, suffix, best_of: bestOf, ...rest } = req.passthrough ?? {};
  const passthrough = Object.fromEntries(Object.entries(rest).filter(([field]) => !CHAT_TOOL_FIELDS.has(field)));
  const unsupported = (param: string) => invalidParameter(param, `is not supported on /v1/completions by model '${req.model.id}' (its protocol answers in chat form)`);
  if (logprobs != null) throw unsupported("logprobs");
  if (echo === true) throw unsupported("echo");
  if (suffix != null) throw unsupported("suffix");
  if (typeof bestOf === "number" && bestOf > 1) throw unsupported("best_of");
  return {
    model: req.model,
    messages: [{ role: "user", content: req.prompt }],
    maxTokens: req.maxTokens ?? COMPLETION_DEFAULT_MAX_TOKENS,
    temperature: req.temperature,
    passthrough,
    signal: req.signal,
  };
}

export function chatAsCompletion(result: ChatResult): CompletionResult {
  return { text: result.content, finishReason: result.finishReason, usage: result.usage, ...(result.fields ? { fields: result.fields } : {}) };
}
