// Token counting used when an upstream reports no usage (and by the gateway to size holds).
// gpt-tokenizer is pure JS. cl100k_base is the encoding of the textA-4 / 3.5 family, close enough for the other text
// models we sell, and half the memory of the default o200k_base (about 36 MB of RSS instead of 69).
import { countTokens as countEncodedTokens, setMergeCacheSize } from "gpt-tokenizer/encoding/cl100k_base";
import type { ChatMessage } from "./types";

/**
 * The tokenizer remembers the merges of every distinct word it has seen, up to 100,000 by default: on varied
 * traffic that grows the heap by 12-25 MB (and RSS by more), all of it marked by every full collection. Common
 * words are a small set, so 10,000 entries keep nearly all the hits (docs/performance.md) in about 3 MB.
 */
export const TOKENIZER_MERGE_CACHE_ENTRIES = 10_000;
setMergeCacheSize(TOKENIZER_MERGE_CACHE_ENTRIES);

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : countEncodedTokens(text);
}

/** Per-message framing as OpenAI counts it: 3 tokens per message plus 3 to prime the reply. */
export function countMessageTokens(messages: readonly ChatMessage[]): number {
  let total = 3;
  for (const message of messages) total += 3 + countTokens(message.role) + countTokens(message.content) + countToolCallTokens(message);
  return total;
}

/** The calls an assistant message made (names and arguments) and the tool-call fields of a tool message. */
export function countToolCallTokens(message: ChatMessage): number {
  let total = 0;
  for (const call of message.toolCalls ?? []) total += 3 + countTokens(call.function.name) + countTokens(call.function.arguments);
  if (message.toolCallId !== undefined) total += countTokens(message.toolCallId);
  if (message.name !== undefined) total += 1 + countTokens(message.name);
  return total;
}
