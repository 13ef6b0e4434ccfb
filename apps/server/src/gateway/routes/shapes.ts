// Response bodies of SPEC 2.5-2.7, 4.2-4.4 and CONTRACT 5, built from normalized provider results.
import type { AudioResult, ChatResult, TextUsage } from "@gw/providers";

export const unixSeconds = (ms: number): number => Math.floor(ms / 1000);

export function usageBody(usage: TextUsage) {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens };
}

/** A chat answer: the upstream's message (tool calls and all) and logprobs, under our id, model and usage. */
export function textCompletionBody(opts: { id: string; object: "task.completion" | "chat.completion"; created: number; model: string; result: ChatResult }) {
  const { result } = opts;
  return {
    id: opts.id,
    object: opts.object,
    created: opts.created,
    model: opts.model,
    choices: [result, ...(result.moreChoices ?? [])].map((choice, index) => ({
      index, message: choice.message, logprobs: choice.logprobs ?? null, finish_reason: choice.finishReason,
    })),
    usage: { ...usageBody(result.usage), ...result.usageDetails },
    ...result.fields,
  };
}

/** Audio is returned inline: `b64_json`, and `url` as a data: URL of the same bytes (nothing is stored server-side). */
export function audioBody(audio: AudioResult) {
  const b64 = audio.audio.toString("base64");
  return { url: `data:${audio.contentType};base64,${b64}`, b64_json: b64 };
}
