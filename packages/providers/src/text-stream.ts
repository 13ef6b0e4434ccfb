// Folds an adapter's normalized stream pieces into the gateway's ChatStreamEvents, with usage at the end:
// upstream-reported when present, else counted with the tokenizer.
import { AppError } from "@gw/shared";
import { copyFailure } from "./http/failure-marks";
import type { SseEvent } from "./http/sse";
import { countTokens } from "./tokens";
import type { ChatResult, ChatStreamEvent, TextUsage } from "./types";

/** What an adapter's parseStreamEvent reads out of one upstream event. */
export type StreamPiece =
  /** `delta`: the whole upstream delta in OpenAI's shape, when it carries more than text (tool_calls ...) */
  | { kind: "delta"; content: string; delta?: Record<string, unknown>; logprobs?: unknown; index?: number }
  /** `index`: the choice (of `n`) it belongs to, when not the first */
  | { kind: "finish"; reason: string; stopSequence?: string; index?: number }
  | { kind: "usage"; promptTokens?: number; completionTokens?: number; details?: Record<string, unknown> }
  /** top-level chunk fields kept for the client's chunks (system_fingerprint, service_tier) */
  | { kind: "fields"; fields: Record<string, unknown> }
  /** the upstream's explicit end marker ([DONE], message_stop) */
  | { kind: "end" };

/**
 * Thrown when a stream fails after output began. `usage` is what was produced so far, so the gateway can
 * charge for it (CONTRACT 6); `reported` holds the figures the upstream itself sent before the cut (Anthropic's
 * message_start reports the prompt first), which the gateway prefers to its own counts. It is an AppError, so it
 * maps to the spec's shape like any other.
 */
export class StreamInterruptedError extends AppError {
  readonly usage: TextUsage;
  readonly reported: Partial<TextUsage>;
  readonly contentStarted: boolean;

  constructor(cause: AppError, usage: TextUsage, contentStarted: boolean, reported: Partial<TextUsage> = {}) {
    super(cause.code, cause.message, cause.extras);
    this.name = "StreamInterruptedError";
    this.usage = usage;
    this.reported = reported;
    this.contentStarted = contentStarted;
    copyFailure(cause, this);
  }
}

export interface TextStreamOptions {
  /** the upstream's events; `replayable` says whether a failed attempt may still be repeated (UpstreamCall.replayable) */
  events: (replayable: () => boolean) => AsyncIterable<SseEvent>;
  parseStreamEvent: (event: SseEvent) => StreamPiece[];
  /** counts the prompt if upstream does not; only called when needed */
  countPrompt: () => number;
  /** a completion's prompt that `echo: true` repeats at the start of its text: billed as prompt, not output */
  echoed?: string;
}

/** A completion's text less the prompt that `echo: true` repeats at its start (OpenAI bills that as prompt only). */
export function withoutEcho(text: string, echoed: string | undefined): string {
  return echoed !== undefined && text.startsWith(echoed) ? text.slice(echoed.length) : text;
}

/**
 * Text an OpenAI message or delta produced besides its content: OpenAI's `refusal` (sent instead of content) and the
 * reasoning that OpenAI-compatible servers stream before the answer (`reasoning_content`, `reasoning`). The client
 * receives it, so it counts as output.
 */
function sideText(part: Record<string, unknown> | undefined): string {
  if (part === undefined) return "";
  let text = "";
  if (typeof part.refusal === "string") text += part.refusal;
  if (typeof part.reasoning_content === "string") text += part.reasoning_content;
  if (typeof part.reasoning === "string") text += part.reasoning;
  return text;
}

/** What a chat answer produced: its text, refusal and reasoning and, when it made calls, their JSON (output bytes, counted tokens). */
export function chatOutputText(result: Pick<ChatResult, "content" | "message" | "moreChoices">): string {
  const calls = result.message.tool_calls;
  const more = result.moreChoices?.map(chatOutputText).join("") ?? "";
  return result.content + sideText(result.message) + (calls === undefined ? "" : JSON.stringify(calls)) + more;
}

/** The output of an OpenAI delta besides its content: refusal and reasoning text, tool-call names and argument pieces. */
export function deltaOutputText(delta: Record<string, unknown> | undefined): string {
  let text = sideText(delta);
  const calls = delta?.tool_calls;
  if (!Array.isArray(calls)) return text;
  for (const call of calls as Array<{ function?: { name?: unknown; arguments?: unknown } }>) {
    if (typeof call.function?.name === "string") text += call.function.name;
    if (typeof call.function?.arguments === "string") text += call.function.arguments;
  }
  return text;
}

/** A delta's choice, when not the first. */
const choiceOf = (piece: { index?: number }): { index?: number } => (piece.index ? { index: piece.index } : {});

const truncated = () => new AppError("upstream_error", "The upstream stream ended before it was complete.");

export async function* foldTextStream(options: TextStreamOptions): AsyncGenerator<ChatStreamEvent> {
  const parts: string[] = [];
  let finishReason: string | undefined;
  let stopSequence: string | undefined;
  let promptTokens: number | undefined;
  let completionTokens: number | undefined;
  let usageDetails: Record<string, unknown> | undefined;
  let fields: Record<string, unknown> | undefined;
  /** the finish reasons of the choices after the first (`n` above 1), by index */
  const moreFinishes = new Map<number, string>();
  let ended = false;
  // Until a delta is handed on, nothing reached the client: a connection lost before may be retried upstream.
  let handedOn = false;
  const events = options.events(() => !handedOn && finishReason === undefined);
  const usageSoFar = (): TextUsage => ({
    promptTokens: promptTokens ?? options.countPrompt(),
    completionTokens: completionTokens ?? countTokens(withoutEcho(parts.join(""), options.echoed)),
  });
  try {
    for await (const event of events) {
      for (const piece of options.parseStreamEvent(event)) {
        if (piece.kind === "delta") {
          if (piece.delta !== undefined || piece.logprobs !== undefined) {
            // what a tool call or a refusal produced (names, argument fragments, refusal text) counts as output, like text
            const produced = piece.content + deltaOutputText(piece.delta);
            if (produced.length > 0) parts.push(produced);
            handedOn = true;
            yield { type: "delta", content: piece.content, delta: piece.delta, logprobs: piece.logprobs, ...choiceOf(piece), ...(fields ? { fields } : {}) };
            continue;
          }
          if (piece.content.length === 0) continue;
          parts.push(piece.content);
          handedOn = true;
          yield { type: "delta", content: piece.content, ...choiceOf(piece), ...(fields ? { fields } : {}) };
        } else if (piece.kind === "finish") {
          if (piece.index) moreFinishes.set(piece.index, piece.reason);
          else {
            finishReason = piece.reason;
            stopSequence = piece.stopSequence;
          }
        } else if (piece.kind === "fields") {
          fields = piece.fields;
        } else if (piece.kind === "usage") {
          promptTokens = piece.promptTokens ?? promptTokens;
          completionTokens = piece.completionTokens ?? completionTokens;
          usageDetails = piece.details ?? usageDetails;
        } else {
          ended = true;
        }
      }
      if (ended) break;
    }
    // Servers that close without an end marker are accepted only once they said why they finished; an end marker
    // with neither output nor a finish reason before it (`data: [DONE]` alone) is no answer either.
    if (finishReason === undefined && (!ended || !handedOn)) throw truncated();
  } catch (err) {
    // Once the upstream said why it finished, the answer is whole: what it lost is its end marker (and perhaps a
    // usage report, then counted), so the client gets a complete stream and the upstream's usage is charged.
    if (finishReason === undefined) {
      const cause = err instanceof AppError ? err : new AppError("upstream_error", "The upstream stream failed.");
      const reported: Partial<TextUsage> = {};
      if (promptTokens !== undefined) reported.promptTokens = promptTokens;
      if (completionTokens !== undefined) reported.completionTokens = completionTokens;
      throw new StreamInterruptedError(cause, usageSoFar(), parts.length > 0, reported);
    }
  }
  const more = moreFinishes.size > 0 ? { moreFinishReasons: [...moreFinishes].sort(([a], [b]) => a - b).map(([, reason]) => reason) } : {};
  yield { type: "done", finishReason: finishReason ?? "stop", ...(stopSequence !== undefined ? { stopSequence } : {}), usage: usageSoFar(), ...more, ...(usageDetails ? { usageDetails } : {}), ...(fields ? { fields } : {}) };
}
