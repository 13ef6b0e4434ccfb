// Token counting used when an upstream reports no usage (and by the gateway to size holds).
// gpt-tokenizer is pure JS; its default encoding (o200k_base) is close enough for every text model we sell.
import { countTokens as countEncodedTokens } from "gpt-tokenizer";
import type { ChatMessage } from "./types";

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : countEncodedTokens(text);
}

/** Per-message framing as OpenAI counts it: 3 tokens per message plus 3 to prime the reply. */
export function countMessageTokens(messages: readonly ChatMessage[]): number {
  let total = 3;
  for (const message of messages) total += 3 + countTokens(message.role) + countTokens(message.content);
  return total;
}
