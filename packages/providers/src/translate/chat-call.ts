// What the translated APIs (/v1/messages, /v1/responses) turn a request into: one chat call of the gateway's pipeline,
// which then reaches an OpenAI-protocol upstream as chat completions and an Anthropic one as Messages.
import type { AppError } from "@gw/shared";
import type { ChatMessage, ChatStreamEvent, TextUsage, ToolCall } from "../types";

export interface TranslatedChat {
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  /** OpenAI chat fields the call carries (tools, tool_choice, parallel_tool_calls, top_p, stop, response_format, user) */
  passthrough: Record<string, unknown>;
}

export type ChatDeltaEvent = Extract<ChatStreamEvent, { type: "delta" }>;
export type ChatDoneEvent = Extract<ChatStreamEvent, { type: "done" }>;

/**
 * Writes one streamed answer in a client API's event format. The gateway's stream handler holds, charges and paces;
 * an encoder only spells the events (each method returns the text to write, "" for nothing).
 */
export interface ChatStreamEncoder {
  /** sent with the status line, before any output; `first` is the upstream event that opened the stream */
  open(first: ChatStreamEvent): string;
  delta(event: ChatDeltaEvent): string;
  /** called once the answer is whole, before its end is written (a stored answer is saved here) */
  complete?(done: ChatDoneEvent): Promise<void>;
  /** the end of a whole answer; `costMicros` is what it was charged */
  finish(done: ChatDoneEvent, costMicros: number): string;
  /** a stream cut after output began: `produced` is what was charged for, `error` why it ended */
  cut(produced: TextUsage, costMicros: number, error: AppError): string;
}

/** A named server-sent event, as Anthropic's and OpenAI's Responses streams write them. */
export const namedEvent = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** A function call's arguments as an object (Messages' tool_use input): `{}` for none or for text that is not a JSON object. */
export function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // an upstream's malformed arguments: the client gets an empty input rather than a broken answer
  }
  return {};
}

/** The tool calls of an assistant message in OpenAI's shape (ChatResult.message). */
export const toolCallsOf = (message: Record<string, unknown>): ToolCall[] => (Array.isArray(message.tool_calls) ? (message.tool_calls as ToolCall[]) : []);

/**
 * Accumulates a stream's OpenAI-shaped deltas: text, and tool calls by their `index` (id and name come first, the
 * arguments in fragments). What a translated stream has produced, for its closing events and a stored answer.
 */
export class DeltaAccumulator {
  text = "";
  readonly calls: ToolCall[] = [];
  private readonly byIndex = new Map<number, ToolCall>();

  /** Adds a delta; returns the tool-call pieces it carried (`started` for a call seen for the first time). */
  add(event: ChatDeltaEvent): Array<{ call: ToolCall; started: boolean; fragment: string }> {
    this.text += event.content;
    const out: Array<{ call: ToolCall; started: boolean; fragment: string }> = [];
    const deltas = event.delta?.tool_calls;
    if (!Array.isArray(deltas)) return out;
    for (const d of deltas as Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>) {
      const index = d.index ?? 0;
      let call = this.byIndex.get(index);
      const started = call === undefined;
      if (!call) {
        call = { id: d.id ?? "", type: "function", function: { name: d.function?.name ?? "", arguments: "" } };
        this.byIndex.set(index, call);
        this.calls.push(call);
      }
      const fragment = d.function?.arguments ?? "";
      call.function.arguments += fragment;
      out.push({ call, started, fragment });
    }
    return out;
  }
}
