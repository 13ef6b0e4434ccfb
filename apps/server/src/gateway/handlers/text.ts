import type { ModelDefinition } from "@gw/config";
import { answersNChoicesAtOnce, chatOutputText, type ChatMessage, type EmbeddingInput, type ChatRequest, type ChatResult, type CompletionRequest, type CompletionResult, type Routed, type Served } from "@gw/providers";
import { AppError, invalidParameter } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { completionBudget, completionPromptTokens, countPromptTokens, dearestOf, textCost } from "@gw/gateway";
import type { RequestMeta } from "./request-meta";

export interface TextCall {
  model: ModelDefinition;
  messages: ChatMessage[];
  /** the client's messages as sent, for OpenAI-compatible upstreams (/v1/chat/completions) */
  wireMessages?: readonly unknown[];
  maxTokens?: number;
  /** the field `maxTokens` came from, for error messages (`max_completion_tokens` on /v1/chat/completions) */
  maxTokensParam?: string;
  /** the field holding the prompt, for error messages (`input` on /v1/responses); `messages` when unset */
  promptParam?: string;
  temperature?: number;
  /** how many answers (chat's `n`); the hold covers them all */
  n?: number;
  passthrough?: Record<string, unknown>;
}

export interface TextAnswer {
  /** `served`: the model (the one asked for, or a fallback) and deployment that answered */
  result: Routed<ChatResult>;
  cost: number;
}

/**
 * One non-streamed text call: hold the worst case (prompt + completion budget, at the dearest model that may serve),
 * call upstream, settle to the usage it reports at the price of the model that served, and record it.
 */
async function billedText<R extends Routed<{ usage: { promptTokens: number; completionTokens: number } }>>(
  deps: GatewayDeps,
  meta: RequestMeta,
  model: ModelDefinition,
  budget: { promptTokens: number; windowTokens?: number; maxTokens?: number; maxTokensParam?: string; promptParam?: string; candidates?: number },
  call: () => Promise<R>,
  outputText: (result: R) => string,
): Promise<{ result: R; cost: number }> {
  const windowTokens = budget.windowTokens ?? budget.promptTokens;
  const completionTokens = completionBudget(model, windowTokens, budget.maxTokens, budget.maxTokensParam, budget.promptParam) * (budget.candidates ?? 1);
  const worstCase = dearestOf(deps.providers.modelChain(model), (m) => textCost(m, { promptTokens: budget.promptTokens, completionTokens }));
  return deps.metering.call(meta, {
    worstCase, model: model.id, run: call, costOf: (r) => textCost(r.served.model, r.usage), usageOf: (r) => ({
      model: r.served.model.id, deployment: r.served.deploymentId, type: "text",
      promptTokens: r.usage.promptTokens, completionTokens: r.usage.completionTokens,
      outputBytes: Buffer.byteLength(outputText(r)),
    }),
  });
}

/**
 * The providers' request for a text call. Without a client `max_tokens` the upstream is sent the completion budget
 * the hold covers: an OpenAI-protocol upstream told nothing writes up to the end of its context window (beyond the
 * model's output cap), and a Messages one gets the cap even when the window leaves less; either could then produce,
 * and bill, more than was held.
 */
export function chatRequest(call: TextCall, meta: RequestMeta, budget: number): ChatRequest {
  return {
    model: call.model, messages: call.messages, wireMessages: call.wireMessages, maxTokens: call.maxTokens ?? budget, temperature: call.temperature,
    maxTokensField: call.maxTokensParam === "max_completion_tokens" ? "max_completion_tokens" : undefined,
    n: call.n, passthrough: call.passthrough, signal: meta.signal,
  };
}

/** A non-streamed chat call with hold/settle and a usage record. */
export function runChat(deps: GatewayDeps, meta: RequestMeta, call: TextCall): Promise<TextAnswer> {
  const promptTokens = countPromptTokens(deps, call);
  const request = chatRequest(call, meta, completionBudget(call.model, promptTokens, call.maxTokens, call.maxTokensParam, call.promptParam));
  deps.providers.checkChat(request);
  // n answers: n completions; a protocol without `n` is asked n times, each call reading (and billing) the prompt
  const n = call.n ?? 1;
  // (any model of the fallback chain may serve)
  const promptCopies = deps.providers.modelChain(call.model).every(answersNChoicesAtOnce) ? 1 : n;
  return billedText(deps, meta, call.model, {
    promptTokens: promptTokens * promptCopies, windowTokens: promptTokens, maxTokens: call.maxTokens, maxTokensParam: call.maxTokensParam, promptParam: call.promptParam, candidates: n,
  }, () => deps.providers.chat(request), chatOutputText);
}

export interface CompletionCall {
  model: ModelDefinition;
  prompt: string;
  maxTokens?: number;
  temperature?: number;
  bestOf?: number;
  /** OpenAI reads (and bills) the insertion suffix as prompt; it goes upstream through the passthrough */
  suffix?: string;
  passthrough?: Record<string, unknown>;
}

export function completionRequest(call: CompletionCall, meta: RequestMeta): CompletionRequest {
  return { model: call.model, prompt: call.prompt, maxTokens: call.maxTokens, temperature: call.temperature, passthrough: call.passthrough, signal: meta.signal };
}

export function runCompletion(deps: GatewayDeps, meta: RequestMeta, call: CompletionCall): Promise<{ result: Routed<CompletionResult>; cost: number }> {
  const { tokens: windowTokens, held: promptTokens } = completionPromptTokens(deps, call.prompt, call.suffix);
  const request = completionRequest(call, meta);
  // best_of: the upstream writes (and bills) that many completions and returns one, so the worst case holds them all
  return billedText(deps, meta, call.model, { promptTokens, windowTokens, maxTokens: call.maxTokens, promptParam: "prompt", candidates: call.bestOf }, () => deps.providers.completion(request), (r) => r.text);
}

export async function runEmbeddings(
  deps: GatewayDeps,
  meta: RequestMeta,
  call: { model: ModelDefinition; input: EmbeddingInput; passthrough?: Record<string, unknown>; itemized?: boolean },
): Promise<{ vectors: number[][]; promptTokens: number; cost: number; served: Served }> {
  // Token arrays are counted exactly; a text gets one token of slack for the tokenizer's differences from the upstream's.
  let counted = 0;
  for (const [index, item] of call.input.entries()) {
    const tokens = typeof item === "string" ? deps.providers.countTokens(item) : item.length;
    counted += typeof item === "string" ? tokens + 1 : tokens;
    if (call.model.contextWindow !== undefined && tokens > call.model.contextWindow) {
      // an item of an array is named, so a client sending many inputs knows which one to shorten
      const param = call.itemized ? `input[${index}]` : "input";
      throw invalidParameter(param, `an input exceeds the ${call.model.contextWindow}-token limit of '${call.model.id}'`);
    }
  }
  const worstCase = dearestOf(deps.providers.modelChain(call.model), (m) => textCost(m, { promptTokens: counted, completionTokens: 0 }));
  const { result, cost } = await deps.metering.call(meta, {
    worstCase, model: call.model.id,
    run: () => deps.providers.embeddings({ model: call.model, input: call.input, passthrough: call.passthrough, signal: meta.signal }),
    costOf: (r) => {
      // A wrong answer costs nothing: thrown before the settle, so the hold is released.
      if (r.vectors.length !== call.input.length) throw new AppError("upstream_error", "The upstream returned a wrong number of embeddings.");
      return textCost(r.served.model, { promptTokens: r.usage.promptTokens, completionTokens: 0 });
    },
    usageOf: (r) => ({
      model: r.served.model.id, deployment: r.served.deploymentId, type: "embedding", promptTokens: r.usage.promptTokens,
      outputBytes: r.vectors.reduce((n, v) => n + v.length * 4, 0),
    }),
  });
  return { vectors: result.vectors, promptTokens: result.usage.promptTokens, cost, served: result.served };
}
