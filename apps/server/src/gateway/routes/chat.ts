import type { Request, Response } from "express";
import { randomBase62 } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { resolveModel, requireConfigured } from "../deps";
import { admitKeyForModel } from "../limits/key-gate";
import { parseOrThrow, requireObject } from "../http/validate";
import { setCostHeader, setServedHeader } from "../http/answer-headers";
import { requestMeta } from "../handlers/request-meta";
import { streamChat, streamCompletion } from "../handlers/stream";
import { runChat, runCompletion, runEmbeddings } from "../handlers/text";
import { CHAT_KNOWN_FIELDS, COMPLETION_KNOWN_FIELDS, EMBEDDING_KNOWN_FIELDS, chatBody, completionBody, embeddingBody, passthroughOf } from "../schemas/text";
import { textCompletionBody, unixSeconds, usageBody } from "./shapes";
import { AppError, invalidParameter, missingParameter } from "@gw/shared";
import { answersNChoicesAtOnce, COMPLETION_DEFAULT_MAX_TOKENS } from "@gw/providers";

/** `model` is checked first so a missing or unknown model is reported as such, whatever else is wrong. */
export function modelField(body: Record<string, unknown>): string {
  const model = body.model;
  if (model === undefined || model === null || model === "") throw missingParameter("model");
  if (typeof model !== "string") throw new AppError("invalid_parameter", "Invalid parameter 'model': must be a string.");
  return model;
}

/** POST /v1/chat/completions */
export function chatCompletions(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const raw = requireObject(req.body);
    const model = resolveModel(deps, modelField(raw), ["text"]);
    await admitKeyForModel(deps, res, model.id);
    const body = parseOrThrow(chatBody, raw);
    // several answers stream interleaved only from an upstream that writes them so (docs/openai-compatibility.md)
    if (body.stream && body.n != null && body.n > 1 && !answersNChoicesAtOnce(model)) {
      throw invalidParameter("n", `must be 1 when 'stream' is enabled for model '${model.id}' (its protocol answers one choice per call)`);
    }
    requireConfigured(deps, model);
    const meta = requestMeta(deps, req, res);
    const call = {
      model,
      messages: body.messages,
      wireMessages: raw.messages as unknown[],
      maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
      maxTokensParam: body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens",
      temperature: body.temperature ?? undefined,
      n: body.n ?? undefined,
      passthrough: passthroughOf(raw, CHAT_KNOWN_FIELDS),
    };
    const id = openAiId("chatcmpl");
    const created = unixSeconds(deps.ctx.clock.now());
    if (body.stream) {
      await streamChat(deps, meta, res, call, { object: "chat.completion.chunk", id, created, includeUsage: body.stream_options?.include_usage === true });
      return;
    }
    const { result, cost } = await runChat(deps, meta, call);
    setCostHeader(res, cost);
    setServedHeader(res, result.served);
    res.json(textCompletionBody({ id, object: "chat.completion", created, model: result.served.model.id, result }));
  };
}

/** An answer id spelled like OpenAI's (`chatcmpl-…`, `cmpl-…`: a hyphen, where the gateway's own ids have `_`). */
const openAiId = (prefix: string): string => `${prefix}-${randomBase62(24)}`;

/** POST /v1/completions (deprecated; CONTRACT 5: the route sets the Deprecation header, streamed answers included) */
export function completions(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const raw = requireObject(req.body);
    const model = resolveModel(deps, modelField(raw), ["text"]);
    await admitKeyForModel(deps, res, model.id);
    const body = parseOrThrow(completionBody, raw);
    requireConfigured(deps, model);
    const meta = requestMeta(deps, req, res);
    const call = {
      // OpenAI's completions write at most 16 tokens when max_tokens is unset: that is the worst case held, and it is sent
      // upstream so that an OpenAI-compatible server with another default cannot write more than was held
      model, prompt: body.prompt, maxTokens: body.max_tokens ?? COMPLETION_DEFAULT_MAX_TOKENS, temperature: body.temperature ?? undefined, bestOf: body.best_of ?? undefined,
      suffix: body.suffix ?? undefined,
      passthrough: passthroughOf(raw, COMPLETION_KNOWN_FIELDS),
    };
    const id = openAiId("cmpl");
    const created = unixSeconds(deps.ctx.clock.now());
    if (body.stream) {
      await streamCompletion(deps, meta, res, call, { object: "text_completion", id, created, includeUsage: body.stream_options?.include_usage === true });
      return;
    }
    const { result, cost } = await runCompletion(deps, meta, call);
    setCostHeader(res, cost);
    setServedHeader(res, result.served);
    res.json({
      id,
      object: "text_completion",
      created,
      model: result.served.model.id,
      choices: [{ text: result.text, index: 0, logprobs: result.logprobs ?? null, finish_reason: result.finishReason }],
      usage: usageBody(result.usage),
      ...result.fields,
    });
  };
}

function base64Floats(vector: number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString("base64");
}

/**
 * POST /v1/embeddings: a string, strings, token ids or token arrays as input; encoding_format float (default) or base64 (little-endian float32).
 * The upstream is always asked for base64 (adapter), so the vectors are exact float32 either way; other fields
 * (dimensions, user ...) are passed through.
 */
export function embeddings(deps: GatewayDeps) {
  return async (req: Request, res: Response) => {
    const raw = requireObject(req.body);
    const model = resolveModel(deps, modelField(raw), ["embedding"]);
    await admitKeyForModel(deps, res, model.id);
    const body = parseOrThrow(embeddingBody, raw);
    requireConfigured(deps, model);
    const meta = requestMeta(deps, req, res);
    // an array of strings or token arrays is a list of inputs (one array of token ids is a single input)
    const itemized = Array.isArray(raw.input) && typeof raw.input[0] !== "number";
    const { vectors, promptTokens, cost, served } = await runEmbeddings(deps, meta, { model, input: body.input, passthrough: passthroughOf(raw, EMBEDDING_KNOWN_FIELDS), itemized });
    const base64 = body.encoding_format === "base64";
    setCostHeader(res, cost);
    setServedHeader(res, served);
    res.json({
      object: "list",
      data: vectors.map((v, index) => ({ object: "embedding", index, embedding: base64 ? base64Floats(v) : v })),
      model: served.model.id,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    });
  };
}
