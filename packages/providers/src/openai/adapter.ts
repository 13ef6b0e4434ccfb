// OpenAI-protocol adapter: wires the pure transforms to the shared upstream client.
import type { CancelSignal } from "@gw/shared";
import type { EndpointResolver } from "../endpoint";
import { upstreamModelName } from "../endpoint";
import type { SseEvent } from "../http/sse";
import type { UpstreamClient } from "../http/upstream-client";
import { chatOutputText, foldTextStream, withoutEcho, type StreamPiece } from "../text-stream";
import { countMessageTokens, countTokens } from "../tokens";
import type { ChatRequest, ChatResult, ChatStreamEvent, CompletionRequest, CompletionResult, EmbeddingRequest, EmbeddingResult } from "../types";
import {
  buildChatRequest, buildCompletionRequest, buildEmbeddingsRequest, parseChatResponse, parseChatStreamEvent,
  parseCompletionResponse, parseCompletionStreamEvent, parseEmbeddingsResponse, parseError, streamFailure, type BuiltRequest,
} from "./transform";

export interface TextAdapter {
  chat(req: ChatRequest): Promise<ChatResult>;
  chatStream(req: ChatRequest): AsyncIterable<ChatStreamEvent>;
  /** Throws the 400s this protocol has for the request (what it cannot carry), before any money moves. */
  check?(req: ChatRequest): void;
}

export interface OpenAiAdapter extends TextAdapter {
  completion(req: CompletionRequest): Promise<CompletionResult>;
  completionStream(req: CompletionRequest): AsyncIterable<ChatStreamEvent>;
  embeddings(req: EmbeddingRequest): Promise<EmbeddingResult>;
}

/** A completions prompt as the upstream bills it when it reports no usage: its insertion `suffix` (passed through) included. */
function countCompletionPrompt(req: CompletionRequest): number {
  const suffix = req.passthrough?.suffix;
  return countTokens(req.prompt) + (typeof suffix === "string" && suffix !== "" ? countTokens(suffix) : 0);
}

/** The prompt an `echo: true` completion repeats at the start of its text. */
const echoedPrompt = (req: CompletionRequest): string | undefined => (req.passthrough?.echo === true ? req.prompt : undefined);

export function createOpenAiAdapter(client: UpstreamClient, endpointFor: EndpointResolver): OpenAiAdapter {
  const stream = (built: BuiltRequest, signal: CancelSignal, parseStreamEvent: (event: SseEvent) => StreamPiece[], countPrompt: () => number, echoed?: string) => foldTextStream({
    events: (replayable) => client.events({ ...built, signal, parseError, replayable, eventFailure: streamFailure }),
    parseStreamEvent,
    countPrompt,
    echoed,
  });
  return {
    async chat(req) {
      const built = buildChatRequest(endpointFor(req.model), upstreamModelName(req.model), req, false);
      const json = await client.json({ ...built, signal: req.signal, parseError });
      const result = parseChatResponse(json);
      return {
        ...result,
        usage: {
          promptTokens: result.usage.promptTokens ?? countMessageTokens(req.messages),
          completionTokens: result.usage.completionTokens ?? countTokens(chatOutputText(result)),
        },
      };
    },

    chatStream(req) {
      const built = buildChatRequest(endpointFor(req.model), upstreamModelName(req.model), req, true);
      return stream(built, req.signal, parseChatStreamEvent, () => countMessageTokens(req.messages));
    },

    async completion(req) {
      const built = buildCompletionRequest(endpointFor(req.model), upstreamModelName(req.model), req);
      const result = parseCompletionResponse(await client.json({ ...built, signal: req.signal, parseError }));
      return {
        ...result,
        usage: {
          promptTokens: result.usage.promptTokens ?? countCompletionPrompt(req),
          completionTokens: result.usage.completionTokens ?? countTokens(withoutEcho(result.text, echoedPrompt(req))),
        },
      };
    },

    completionStream(req) {
      const built = buildCompletionRequest(endpointFor(req.model), upstreamModelName(req.model), req, true);
      return stream(built, req.signal, parseCompletionStreamEvent, () => countCompletionPrompt(req), echoedPrompt(req));
    },

    async embeddings(req) {
      const built = buildEmbeddingsRequest(endpointFor(req.model), upstreamModelName(req.model), req);
      const result = parseEmbeddingsResponse(await client.json({ ...built, signal: req.signal, parseError }), req.input.length);
      let promptTokens = result.promptTokens;
      if (promptTokens === undefined) {
        promptTokens = 0;
        for (const item of req.input) promptTokens += typeof item === "string" ? countTokens(item) : item.length;
      }
      return { vectors: result.vectors, usage: { promptTokens } };
    },
  };
}
