import { z } from "zod";
import { messages, positiveInt, safeString, temperature } from "./common";

// Fields the gateway itself interprets; anything else on /v1/* is passed through to OpenAI-compatible upstreams
// (collected from the raw body by passthroughOf, so the schemas below strip unknown keys instead of copying them).
export const CHAT_KNOWN_FIELDS = ["model", "messages", "max_tokens", "max_completion_tokens", "temperature", "stream", "stream_options", "n"];
export const COMPLETION_KNOWN_FIELDS = ["model", "prompt", "max_tokens", "temperature", "stream", "stream_options", "n"];

const streamOptions = z.object({ include_usage: z.boolean().optional() }).nullish();
// Only one choice per request is produced and billed.
const singleChoice = z.literal(1).nullish();

export const chatBody = z.object({
  model: z.string(),
  messages,
  max_tokens: positiveInt.nullish(),
  max_completion_tokens: positiveInt.nullish(),
  temperature: temperature.nullish(),
  stream: z.boolean().nullish(),
  stream_options: streamOptions,
  n: singleChoice,
});
export type ChatBody = z.output<typeof chatBody>;

export const completionBody = z.object({
  model: z.string(),
  prompt: z.union([safeString(400_000), z.array(safeString(400_000)).length(1).transform((a) => a[0] ?? "")]),
  max_tokens: positiveInt.nullish(),
  temperature: temperature.nullish(),
  stream: z.literal(false).nullish(),
  n: singleChoice,
});
export type CompletionBody = z.output<typeof completionBody>;

export const embeddingBody = z.object({
  model: z.string(),
  input: z.union([safeString(400_000), z.array(safeString(400_000)).min(1).max(2048)]),
  encoding_format: z.enum(["float", "base64"]).nullish(),
});
export type EmbeddingBody = z.output<typeof embeddingBody>;

/** Unknown fields of an OpenAI request, forwarded untouched. */
export function passthroughOf(body: Record<string, unknown>, known: string[]): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  let any = false;
  for (const [k, v] of Object.entries(body)) {
    if (known.includes(k)) continue;
    out[k] = v;
    any = true;
  }
  return any ? out : undefined;
}
