// Anthropic Messages adapter: wires the pure transforms to the shared upstream client.
import type { EndpointResolver } from "../endpoint";
import { upstreamModelName } from "../endpoint";
import type { UpstreamClient } from "../http/upstream-client";
import type { TextAdapter } from "../openai/adapter";
import { chatOutputText, foldTextStream } from "../text-stream";
import { countMessageTokens, countTokens } from "../tokens";
import { buildMessagesRequest, DEFAULT_MAX_TOKENS, isPing, parseError, parseMessagesResponse, messagesStreamParser, streamFailure } from "./transform";

export function createAnthropicAdapter(client: UpstreamClient, endpointFor: EndpointResolver): TextAdapter {
  const build = (req: Parameters<TextAdapter["chat"]>[0], stream: boolean) =>
    buildMessagesRequest(endpointFor(req.model), upstreamModelName(req.model), req, stream, req.model.maxOutputTokens ?? DEFAULT_MAX_TOKENS);
  return {
    async chat(req) {
      const result = parseMessagesResponse(await client.json({ ...build(req, false), signal: req.signal, parseError }));
      // an Anthropic-compatible server that reports no usage: counted, as a stream without usage is
      return {
        ...result,
        usage: {
          promptTokens: result.usage.promptTokens ?? countMessageTokens(req.messages),
          completionTokens: result.usage.completionTokens ?? countTokens(chatOutputText(result)),
        },
      };
    },
    check(req) {
      build(req, false);
    },
    chatStream(req) {
      return foldTextStream({
        events: (replayable) => client.events({ ...build(req, true), signal: req.signal, parseError, replayable, eventFailure: streamFailure, keepAlive: isPing }),
        parseStreamEvent: messagesStreamParser(),
        countPrompt: () => countMessageTokens(req.messages),
      });
    },
  };
}
