// Anthropic's Messages API as the gateway serves it (/v1/messages): its request read into a chat call, a chat answer
// written as a Message, a chat stream written as Messages events. Pure transforms; the upstream may speak either protocol.
import type { Protocol } from "@gw/config";
import { type AppError, invalidParameter } from "@gw/shared";
import { z } from "zod";
import { toolCallsOf, argumentsObject, DeltaAccumulator, namedEvent, type ChatDeltaEvent, type ChatDoneEvent, type ChatStreamEncoder, type TranslatedChat } from "./chat-call";
import { checkToolPairs } from "./tool-pairs";
import type { ChatMessage, ChatResult, TextUsage, ToolCall } from "../types";

const textBlock = z.looseObject({ type: z.literal("text"), text: z.string() });
const imageBlock = z.looseObject({
  type: z.literal("image"),
  source: z.discriminatedUnion("type", [
    z.looseObject({ type: z.literal("base64"), media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]), data: z.string().min(1) }),
    z.looseObject({ type: z.literal("url"), url: z.string().min(1) }),
  ]),
});
const toolUseBlock = z.looseObject({ type: z.literal("tool_use"), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()) });
const toolResultBlock = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.discriminatedUnion("type", [textBlock, imageBlock]))]).optional(),
  is_error: z.boolean().optional(),
});
/** Extended-thinking blocks a client sends back with the history: the answer does not depend on them, so they are left out. */
const thinkingBlock = z.looseObject({ type: z.literal("thinking") });
const redactedThinkingBlock = z.looseObject({ type: z.literal("redacted_thinking") });
const block = z.discriminatedUnion("type", [textBlock, imageBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock]);
type Block = z.output<typeof block>;

const message = z.looseObject({ role: z.enum(["user", "assistant"]), content: z.union([z.string(), z.array(block)]) });

const tool = z.looseObject({
  // a custom (client) tool; Anthropic's server tools (web search, code execution ...) have other types and no upstream here
  type: z.literal("custom").optional(),
  name: z.string().min(1).max(128),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal("object") }),
});

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
const toolChoice = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("auto"), ...parallel }),
  z.looseObject({ type: z.literal("any"), ...parallel }),
  z.looseObject({ type: z.literal("tool"), name: z.string().min(1), ...parallel }),
  z.looseObject({ type: z.literal("none") }),
]);

const fields = {
  model: z.string(),
  messages: z.array(message).min(1).max(500),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().positive().optional(),
  stop_sequences: z.array(z.string().min(1)).max(16).optional(),
  tools: z.array(tool).max(128).optional(),
  tool_choice: toolChoice.optional(),
  metadata: z.looseObject({ user_id: z.string().max(256).nullish() }).optional(),
};

/** POST /v1/messages: `max_tokens` is required, as Anthropic's API has it. */
export const messagesApiBody = z.looseObject({ ...fields, max_tokens: z.number().int().positive(), stream: z.boolean().optional() });
/** POST /v1/messages/count_tokens: the request without max_tokens and stream. */
export const countTokensApiBody = z.looseObject(fields);
export type MessagesApiBody = z.output<typeof countTokensApiBody> & { max_tokens?: number };

/** An image block as OpenAI's image_url part: a data URL for inline data. */
function imagePart(b: Extract<Block, { type: "image" }>): Record<string, unknown> {
  const url = b.source.type === "base64" ? `data:${b.source.media_type};base64,${b.source.data}` : b.source.url;
  return { type: "image_url", image_url: { url } };
}

type ContentBlock = z.output<typeof textBlock> | z.output<typeof imageBlock>;

/** Text and image blocks as a chat message's content: the text alone, or every part in order when there are images. */
function chatContent(blocks: readonly ContentBlock[]): Pick<ChatMessage, "content" | "parts"> {
  const content = blocks.map((b) => (b.type === "text" ? b.text : "")).join("");
  if (!blocks.some((b) => b.type === "image")) return { content };
  return { content, parts: blocks.map((b) => (b.type === "text" ? { type: "text", text: b.text } : imagePart(b))) };
}

/** One Messages turn as chat messages: tool results become tool messages (first, as Messages orders them), tool_use blocks calls. */
function toChatMessages(m: z.output<typeof message>, index: number, protocol: Protocol): ChatMessage[] {
  if (typeof m.content === "string") return [{ role: m.role, content: m.content }];
  const out: ChatMessage[] = [];
  const rest: ContentBlock[] = [];
  const calls: ToolCall[] = [];
  for (const [j, b] of m.content.entries()) {
    const at = `messages[${index}].content[${j}]`;
    if (b.type === "text" || b.type === "image") rest.push(b);
    else if (b.type === "tool_use") {
      if (m.role !== "assistant") throw invalidParameter(at, "tool_use blocks belong in assistant turns");
      calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input) } });
    } else if (b.type === "tool_result") {
      if (m.role !== "user") throw invalidParameter(at, "tool_result blocks belong in user turns");
      const blocks: ContentBlock[] = typeof b.content === "string" ? [{ type: "text", text: b.content }] : (b.content ?? []);
      // OpenAI's tool messages carry text only
      if (protocol === "openai" && blocks.some((c) => c.type === "image")) throw invalidParameter(`${at}.content`, "images in tool results are not supported by this model");
      out.push({ role: "tool", toolCallId: b.tool_use_id, ...chatContent(blocks) });
    }
  }
  if (rest.length > 0 || calls.length > 0) out.push({ role: m.role, ...chatContent(rest), ...(calls.length > 0 ? { toolCalls: calls } : {}) });
  return out;
}

function toolChoiceOf(choice: MessagesApiBody["tool_choice"]): Record<string, unknown> {
  if (!choice) return {};
  const out: Record<string, unknown> = {};
  if (choice.type === "auto") out.tool_choice = "auto";
  else if (choice.type === "any") out.tool_choice = "required";
  else if (choice.type === "none") out.tool_choice = "none";
  else out.tool_choice = { type: "function", function: { name: choice.name } };
  if (choice.type !== "none" && choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  return out;
}

/** OpenAI's chat API takes at most this many stop sequences. */
const OPENAI_MAX_STOPS = 4;

/**
 * A Messages request as a chat call for a model of `protocol`. What the model's protocol cannot carry is a 400
 * naming the field (top_k and more than four stop sequences on OpenAI-protocol models).
 */
export function messagesToChat(body: MessagesApiBody, protocol: Protocol): TranslatedChat {
  const messages: ChatMessage[] = [];
  const system = body.system ?? "";
  // text blocks stay parts: their texts glued into one string would run together
  if (typeof system === "string" && system.length > 0) messages.push({ role: "system", content: system });
  else if (Array.isArray(system) && system.length > 0) messages.push({ role: "system", ...chatContent(system), parts: system.map((b) => ({ type: "text", text: b.text })) });
  body.messages.forEach((m, i) => messages.push(...toChatMessages(m, i, protocol)));
  checkToolPairs(messages, "messages");
  if (!messages.some((m) => m.role !== "system")) throw invalidParameter("messages", "needs at least one message with content");
  const passthrough: Record<string, unknown> = {};
  if (body.top_p !== undefined) passthrough.top_p = body.top_p;
  if (body.top_k !== undefined) {
    if (protocol !== "anthropic") throw invalidParameter("top_k", "is not supported by this model (its protocol has no top-k sampling)");
    passthrough.top_k = body.top_k;
  }
  if (body.stop_sequences && body.stop_sequences.length > 0) {
    if (protocol !== "anthropic" && body.stop_sequences.length > OPENAI_MAX_STOPS) throw invalidParameter("stop_sequences", `must have at most ${OPENAI_MAX_STOPS} items for this model`);
    passthrough.stop = body.stop_sequences;
  }
  if (body.tools && body.tools.length > 0) {
    passthrough.tools = body.tools.map((t) => ({ type: "function", function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.input_schema } }));
    Object.assign(passthrough, toolChoiceOf(body.tool_choice));
  }
  if (typeof body.metadata?.user_id === "string" && body.metadata.user_id.length > 0) passthrough.user = body.metadata.user_id;
  return { messages, maxTokens: body.max_tokens, temperature: body.temperature, passthrough };
}

/** Messages' stop reasons from the chat answer's finish reason. */
function stopReasonOf(finishReason: string, stopSequence: string | undefined): string {
  if (stopSequence !== undefined) return "stop_sequence";
  if (finishReason === "length") return "max_tokens";
  if (finishReason === "tool_calls" || finishReason === "function_call") return "tool_use";
  if (finishReason === "content_filter") return "refusal";
  return "end_turn";
}

const usageOf = (usage: TextUsage) => ({ input_tokens: usage.promptTokens, output_tokens: usage.completionTokens });

const toolUseBlockOf = (call: ToolCall) => ({ type: "tool_use", id: call.id, name: call.function.name, input: argumentsObject(call.function.arguments) });

/** A chat answer as a Messages `message`. */
export function chatToMessage(result: ChatResult, opts: { id: string; model: string }): Record<string, unknown> {
  const calls = toolCallsOf(result.message);
  const content: Record<string, unknown>[] = [];
  if (result.content.length > 0 || calls.length === 0) content.push({ type: "text", text: result.content });
  for (const call of calls) content.push(toolUseBlockOf(call));
  return {
    id: opts.id, type: "message", role: "assistant", model: opts.model, content,
    stop_reason: stopReasonOf(result.finishReason, result.stopSequence),
    stop_sequence: result.stopSequence ?? null,
    usage: usageOf(result.usage),
  };
}

/** CONTRACT 9: the Messages error types by the gateway's HTTP status. */
const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error", 404: "not_found_error",
  413: "request_too_large", 429: "rate_limit_error", 503: "overloaded_error",
};

/** An error in Messages' envelope. */
export function messagesErrorBody(err: AppError): { type: "error"; error: { type: string; message: string } } {
  const type = ERROR_TYPES[err.status] ?? (err.status >= 500 ? "api_error" : "invalid_request_error");
  return { type: "error", error: { type, message: err.message } };
}

/** A chat stream written as Messages events: text blocks and tool_use blocks (their input as input_json_delta). */
export class MessagesStreamEncoder implements ChatStreamEncoder {
  private readonly acc = new DeltaAccumulator();
  /** the open content block: its index and kind (a text block, or the tool call it streams) */
  private block: { index: number; call?: ToolCall } | undefined;
  private blocks = 0;
  private readonly blockOfCall = new Map<ToolCall, number>();

  constructor(private readonly opts: { id: string; model: string; promptTokens: number }) {}

  open(): string {
    return namedEvent("message_start", {
      message: {
        id: this.opts.id, type: "message", role: "assistant", model: this.opts.model, content: [],
        stop_reason: null, stop_sequence: null, usage: { input_tokens: this.opts.promptTokens, output_tokens: 0 },
      },
    });
  }

  private close(): string {
    if (!this.block) return "";
    const out = namedEvent("content_block_stop", { index: this.block.index });
    this.block = undefined;
    return out;
  }

  private start(contentBlock: Record<string, unknown>, call?: ToolCall): string {
    const out = this.close();
    this.block = { index: this.blocks++, ...(call ? { call } : {}) };
    return out + namedEvent("content_block_start", { index: this.block.index, content_block: contentBlock });
  }

  delta(event: ChatDeltaEvent): string {
    let out = "";
    if (event.content.length > 0) {
      if (!this.block || this.block.call) out += this.start({ type: "text", text: "" });
      out += namedEvent("content_block_delta", { index: this.block?.index, delta: { type: "text_delta", text: event.content } });
    }
    for (const piece of this.acc.add(event)) {
      if (piece.started) {
        out += this.start({ type: "tool_use", id: piece.call.id, name: piece.call.function.name, input: {} }, piece.call);
        this.blockOfCall.set(piece.call, this.blocks - 1);
      }
      // Calls stream one after another; a fragment of an earlier call (OpenAI does not promise the order) still
      // names that call's block, which is how clients assemble blocks (by index)
      const index = this.blockOfCall.get(piece.call);
      if (piece.fragment.length > 0) out += namedEvent("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece.fragment } });
    }
    return out;
  }

  finish(done: ChatDoneEvent): string {
    // an answer without any output still has its (empty) text block
    const opened = this.blocks === 0 ? this.start({ type: "text", text: "" }) : "";
    return opened + this.close()
      + namedEvent("message_delta", { delta: { stop_reason: stopReasonOf(done.finishReason, done.stopSequence), stop_sequence: done.stopSequence ?? null }, usage: usageOf(done.usage) })
      + namedEvent("message_stop", {});
  }

  cut(_produced: TextUsage, _costMicros: number, error: AppError): string {
    return namedEvent("error", { error: messagesErrorBody(error).error });
  }
}
