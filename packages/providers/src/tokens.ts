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

/**
 * The longest run of whitespace or of non-whitespace handed to the tokenizer in one piece. Its byte-pair merge is
 * quadratic in a piece's length, and the split pattern leaves runs of letters, symbols and spaces unbounded: one
 * 400,000-character word (base64, a minified blob, "xxxx…") blocked the event loop for minutes. Real tokens are far
 * shorter, so ordinary text is counted exactly; a longer run is cut here and may count a token more per cut.
 */
export const MAX_TOKENIZER_RUN_CHARS = 256;

/** JavaScript's `\s`, the whitespace of the tokenizer's split pattern. */
function isWhitespace(code: number): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029
    || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
}

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

export function countTokens(text: string): number {
  if (text.length <= MAX_TOKENIZER_RUN_CHARS) return text.length === 0 ? 0 : countEncodedTokens(text);
  // Every piece the tokenizer forms lies within one run (give or take a leading space and trailing line breaks),
  // so cutting the text wherever a run reaches the bound keeps every piece short: linear time on any input.
  let total = 0;
  let start = 0;
  let runStart = 0;
  let runIsWhitespace = isWhitespace(text.charCodeAt(0));
  for (let i = 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const whitespace = isWhitespace(code);
    if (whitespace !== runIsWhitespace) {
      runStart = i;
      runIsWhitespace = whitespace;
    } else if (i - runStart >= MAX_TOKENIZER_RUN_CHARS && !isLowSurrogate(code)) {
      total += countEncodedTokens(text.slice(start, i));
      start = i;
      runStart = i;
    }
  }
  return total + countEncodedTokens(text.slice(start));
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
