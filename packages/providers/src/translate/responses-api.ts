// OpenAI's Responses API as the gateway serves it (/v1/responses): its request read into a chat call, a chat answer
// written as a Response, a chat stream written as the typed Responses events. Pure transforms; the upstream may speak
// either protocol.
import { type AppError, invalidParameter, randomBase62 } from "@gw/shared";
import { z } from "zod";
import { DeltaAccumulator, namedEvent, toolCallsOf, type ChatDeltaEvent, type ChatDoneEvent, type ChatStreamEncoder, type TranslatedChat } from "./chat-call";
import { checkToolPairs } from "./tool-pairs";
import type { ChatMessage, ChatResult, TextUsage, ToolCall } from "../types";

const inputText = z.looseObject({ type: z.literal("input_text"), text: z.string() });
const inputImage = z.looseObject({
  type: z.literal("input_image"),
  // a URL or a data: URL; uploaded files (file_id) have no store here
  image_url: z.string().min(1),
  detail: z.enum(["low", "high", "auto"]).nullish(),
});
const outputText = z.looseObject({ type: z.literal("output_text"), text: z.string() });
const refusal = z.looseObject({ type: z.literal("refusal"), refusal: z.string() });
const contentPart = z.discriminatedUnion("type", [inputText, inputImage, outputText, refusal]);
type ContentPart = z.output<typeof contentPart>;

const messageItem = z.looseObject({
  type: z.literal("message"),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: z.union([z.string(), z.array(contentPart)]),
});
const functionCallItem = z.looseObject({ type: z.literal("function_call"), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string() });
const functionCallOutputItem = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(z.discriminatedUnion("type", [inputText, inputImage]))]),
});
/** A message item may leave out its `type` (the easy input form `{role, content}`). */
const item = z.preprocess(
  (v) => (typeof v === "object" && v !== null && !("type" in v) && "role" in v ? { ...v, type: "message" } : v),
  z.discriminatedUnion("type", [messageItem, functionCallItem, functionCallOutputItem]),
);
type Item = z.output<typeof item>;

const functionTool = z.looseObject({
  type: z.literal("function"),
  name: z.string().min(1).max(128),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

const format = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text") }),
  z.looseObject({ type: z.literal("json_object") }),
  z.looseObject({ type: z.literal("json_schema"), name: z.string().min(1).max(64), schema: z.record(z.string(), z.unknown()), description: z.string().nullish(), strict: z.boolean().nullish() }),
]);

const metadata = z.record(z.string().max(64), z.string().max(512)).refine((m) => Object.keys(m).length <= 16, { message: "must have at most 16 keys" });

export const responsesApiBody = z.looseObject({
  model: z.string(),
  input: z.union([z.string(), z.array(item).max(500)]).optional(),
  instructions: z.string().nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  tools: z.array(functionTool).max(128).nullish(),
  tool_choice: z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.literal("function"), name: z.string().min(1) })]).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  text: z.looseObject({ format: format.nullish() }).nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  previous_response_id: z.string().min(1).max(200).nullish(),
  metadata: metadata.nullish(),
  user: z.string().max(256).nullish(),
  truncation: z.enum(["auto", "disabled"]).nullish(),
  // reasoning effort has no upstream form here: only its absence is accepted
  reasoning: z.null().optional(),
});
export type ResponsesApiBody = z.output<typeof responsesApiBody>;

function chatContent(parts: readonly (ContentPart | z.output<typeof inputImage>)[]): Pick<ChatMessage, "content" | "parts"> {
  const textOf = (p: ContentPart): string => (p.type === "input_text" || p.type === "output_text" ? p.text : p.type === "refusal" ? p.refusal : "");
  const content = parts.map(textOf).join("");
  if (!parts.some((p) => p.type === "input_image")) return { content };
  return { content, parts: parts.map((p) => (p.type === "input_image" ? { type: "image_url", image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } } : { type: "text", text: textOf(p) })) };
}

/** Input items as chat messages: consecutive function calls are one assistant turn, as chat completions carries them. */
export function itemsToMessages(input: ResponsesApiBody["input"]): ChatMessage[] {
  if (input === undefined) return [];
  if (typeof input === "string") return [{ role: "user", content: input }];
  const messages: ChatMessage[] = [];
  for (const it of input as Item[]) {
    if (it.type === "message") {
      const role = it.role === "developer" ? "system" : it.role;
      messages.push({ role, ...(typeof it.content === "string" ? { content: it.content } : chatContent(it.content)) });
    } else if (it.type === "function_call") {
      const call: ToolCall = { id: it.call_id, type: "function", function: { name: it.name, arguments: it.arguments } };
      const last = messages.at(-1);
      if (last?.role === "assistant") last.toolCalls = [...(last.toolCalls ?? []), call];
      else messages.push({ role: "assistant", content: "", toolCalls: [call] });
    } else {
      messages.push({ role: "tool", toolCallId: it.call_id, ...(typeof it.output === "string" ? { content: it.output } : chatContent(it.output)) });
    }
  }
  return messages;
}

/**
 * A Responses request as a chat call: `instructions` first (not carried over from a previous response, as OpenAI has
 * it), then the stored conversation of `previous_response_id`, then this request's input.
 */
export function responsesToChat(body: ResponsesApiBody, previous: readonly ChatMessage[]): TranslatedChat {
  const input = itemsToMessages(body.input);
  if (input.length === 0) throw invalidParameter("input", "must hold at least one item");
  const messages: ChatMessage[] = [...(body.instructions ? [{ role: "system" as const, content: body.instructions }] : []), ...previous, ...input];
  checkToolPairs(messages, "input");
  const passthrough: Record<string, unknown> = {};
  if (body.top_p != null) passthrough.top_p = body.top_p;
  if (body.user != null) passthrough.user = body.user;
  if (body.tools && body.tools.length > 0) {
    passthrough.tools = body.tools.map((t) => ({
      type: "function",
      function: { name: t.name, ...(t.description != null ? { description: t.description } : {}), parameters: t.parameters ?? { type: "object", properties: {} }, ...(t.strict != null ? { strict: t.strict } : {}) },
    }));
    const choice = body.tool_choice;
    if (choice != null) passthrough.tool_choice = typeof choice === "string" ? choice : { type: "function", function: { name: choice.name } };
    if (body.parallel_tool_calls != null) passthrough.parallel_tool_calls = body.parallel_tool_calls;
  } else if (body.tool_choice === "required" || (typeof body.tool_choice === "object" && body.tool_choice !== null)) {
    throw invalidParameter("tool_choice", "forces a tool call, so 'tools' must offer at least one tool");
  }
  const fmt = body.text?.format;
  if (fmt?.type === "json_object") passthrough.response_format = { type: "json_object" };
  else if (fmt?.type === "json_schema") {
    passthrough.response_format = { type: "json_schema", json_schema: { name: fmt.name, schema: fmt.schema, ...(fmt.description != null ? { description: fmt.description } : {}), ...(fmt.strict != null ? { strict: fmt.strict } : {}) } };
  }
  return { messages, maxTokens: body.max_output_tokens ?? undefined, temperature: body.temperature ?? undefined, passthrough };
}

/** An output item id, spelled like OpenAI's (`msg_…`, `fc_…`). */
const itemId = (prefix: string): string => `${prefix}_${randomBase62(24)}`;

function messageItemOf(id: string, text: string, status: "in_progress" | "completed"): Record<string, unknown> {
  return { type: "message", id, status, role: "assistant", content: status === "completed" ? [outputTextPart(text)] : [] };
}
const outputTextPart = (text: string) => ({ type: "output_text", text, annotations: [], logprobs: [] });
const functionCallItemOf = (id: string, call: ToolCall, status: "in_progress" | "completed") =>
  ({ type: "function_call", id, call_id: call.id, name: call.function.name, arguments: status === "completed" ? call.function.arguments : "", status });

/** What a Response says of an answer: its output items, status, and the conversation turn it adds. */
export interface ResponseOutcome {
  output: Record<string, unknown>[];
  status: "completed" | "incomplete";
  incompleteDetails: { reason: string } | null;
  usage: TextUsage;
  /** the answer as a chat message, for the stored conversation */
  assistant: ChatMessage;
}

function outcomeOf(text: string, calls: ToolCall[], finishReason: string, usage: TextUsage, ids: { message?: string; calls?: string[] } = {}): ResponseOutcome {
  const output: Record<string, unknown>[] = [];
  if (text.length > 0 || calls.length === 0) output.push(messageItemOf(ids.message ?? itemId("msg"), text, "completed"));
  calls.forEach((call, i) => output.push(functionCallItemOf(ids.calls?.[i] ?? itemId("fc"), call, "completed")));
  const reason = finishReason === "length" ? "max_output_tokens" : finishReason === "content_filter" ? "content_filter" : undefined;
  return {
    output,
    status: reason ? "incomplete" : "completed",
    incompleteDetails: reason ? { reason } : null,
    usage,
    assistant: { role: "assistant", content: text, ...(calls.length > 0 ? { toolCalls: calls } : {}) },
  };
}

export const chatToOutcome = (result: ChatResult): ResponseOutcome => outcomeOf(result.content, toolCallsOf(result.message), result.finishReason, result.usage);

/** Responses' usage object. */
export const responsesUsage = (usage: TextUsage) => ({
  input_tokens: usage.promptTokens, input_tokens_details: { cached_tokens: 0 },
  output_tokens: usage.completionTokens, output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: usage.promptTokens + usage.completionTokens,
});

/** The Response object: the request's settings echoed around the answer (`outcome` undefined while in progress). */
export function responseObject(body: ResponsesApiBody, opts: { id: string; createdAt: number; model: string; store: boolean }, outcome?: ResponseOutcome): Record<string, unknown> {
  const response: Record<string, unknown> = {
    id: opts.id, object: "response", created_at: opts.createdAt,
    status: outcome?.status ?? "in_progress",
    error: null,
    incomplete_details: outcome?.incompleteDetails ?? null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: opts.model,
    output: outcome?.output ?? [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: opts.store,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: (body.tools ?? []).map((t) => ({ type: "function", name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? true })),
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? "disabled",
    usage: outcome ? responsesUsage(outcome.usage) : null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
  return response;
}

/** An error as Responses' stream `error` event carries it. */
const errorEventData = (err: AppError) => ({ code: err.code, message: err.message, param: null });

/**
 * A chat stream written as the typed Responses events: `response.created`, `response.in_progress`, then per output
 * item `response.output_item.added` … `.done` (text: content_part and output_text events; a call:
 * function_call_arguments events), and `response.completed` (or `response.incomplete`) with the usage.
 */
export class ResponsesStreamEncoder implements ChatStreamEncoder {
  private readonly acc = new DeltaAccumulator();
  private sequence = 0;
  /** the open output item: its index, id, and the call it streams (none: the message) */
  private item: { index: number; id: string; call?: ToolCall } | undefined;
  private items = 0;
  private messageId: string | undefined;
  private readonly callIds: string[] = [];
  private readonly itemOfCall = new Map<ToolCall, { index: number; id: string }>();
  private outcome: ResponseOutcome | undefined;

  constructor(
    private readonly response: (outcome?: ResponseOutcome) => Record<string, unknown>,
    private readonly onComplete?: (outcome: ResponseOutcome) => Promise<void>,
  ) {}

  private event(type: string, data: Record<string, unknown>): string {
    return namedEvent(type, { sequence_number: this.sequence++, ...data });
  }

  open(): string {
    const response = this.response();
    return this.event("response.created", { response }) + this.event("response.in_progress", { response });
  }

  private close(): string {
    const open = this.item;
    if (!open) return "";
    this.item = undefined;
    const at = { item_id: open.id, output_index: open.index };
    if (open.call) {
      return this.event("response.function_call_arguments.done", { ...at, arguments: open.call.function.arguments })
        + this.event("response.output_item.done", { output_index: open.index, item: functionCallItemOf(open.id, open.call, "completed") });
    }
    const text = this.acc.text;
    return this.event("response.output_text.done", { ...at, content_index: 0, text, logprobs: [] })
      + this.event("response.content_part.done", { ...at, content_index: 0, part: outputTextPart(text) })
      + this.event("response.output_item.done", { output_index: open.index, item: messageItemOf(open.id, text, "completed") });
  }

  delta(event: ChatDeltaEvent): string {
    let out = "";
    if (event.content.length > 0) {
      if (!this.item || this.item.call) out += this.startMessage();
      out += this.event("response.output_text.delta", { item_id: this.item?.id, output_index: this.item?.index, content_index: 0, delta: event.content, logprobs: [] });
    }
    // the text so far is read when the message closes; calls accumulate their arguments
    const pieces = this.acc.add(event);
    for (const piece of pieces) {
      if (piece.started) {
        out += this.close();
        const id = itemId("fc");
        this.callIds.push(id);
        this.item = { index: this.items++, id, call: piece.call };
        this.itemOfCall.set(piece.call, this.item);
        out += this.event("response.output_item.added", { output_index: this.item.index, item: functionCallItemOf(id, piece.call, "in_progress") });
      }
      // Calls stream one after another; a fragment of an earlier call (OpenAI's chat stream does not promise the
      // order) still names that call's item, and the final response carries every call whole
      const item = this.itemOfCall.get(piece.call);
      if (piece.fragment.length > 0) out += this.event("response.function_call_arguments.delta", { item_id: item?.id, output_index: item?.index, delta: piece.fragment });
    }
    return out;
  }

  private startMessage(): string {
    let out = this.close();
    this.messageId ??= itemId("msg");
    this.item = { index: this.items++, id: this.messageId };
    const at = { item_id: this.messageId, output_index: this.item.index };
    out += this.event("response.output_item.added", { output_index: this.item.index, item: messageItemOf(this.messageId, "", "in_progress") });
    out += this.event("response.content_part.added", { ...at, content_index: 0, part: outputTextPart("") });
    return out;
  }

  async complete(done: ChatDoneEvent): Promise<void> {
    // an answer without any output still has its (empty) message: its id is chosen now, for the stored answer
    if (this.items === 0) this.messageId ??= itemId("msg");
    this.outcome = outcomeOf(this.acc.text, this.acc.calls, done.finishReason, done.usage, { message: this.messageId, calls: this.callIds });
    await this.onComplete?.(this.outcome);
  }

  finish(done: ChatDoneEvent): string {
    const outcome = this.outcome ?? outcomeOf(this.acc.text, this.acc.calls, done.finishReason, done.usage, { message: this.messageId, calls: this.callIds });
    const opened = this.items === 0 ? this.startMessage() : "";
    const response = this.response(outcome);
    return opened + this.close() + this.event(outcome.status === "completed" ? "response.completed" : "response.incomplete", { response });
  }

  cut(_produced: TextUsage, _costMicros: number, error: AppError): string {
    return this.event("error", errorEventData(error));
  }
}
