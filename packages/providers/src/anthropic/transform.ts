// Anthropic Messages protocol (textB): pure request/response/stream transforms.
import { invalidParameter, type AppError } from "@gw/shared";
import type { Endpoint } from "../endpoint";
import type { SseEvent } from "../http/sse";
import { StreamFailure } from "../http/upstream-client";
import type { StreamPiece } from "../text-stream";
import type { ChatMessage, ChatRequest, ChatResult, ToolCall } from "../types";
import { readErrorMessage, upstreamStatusError, wrongShape } from "../upstream-errors";
import type { BuiltRequest, PartialUsage } from "../openai/transform";
import { errorEventSchema, errorMessage, messageResponseSchema, streamEventSchema } from "./schemas";

export const ANTHROPIC_VERSION = "2023-06-01";
/** Messages requires max_tokens; used when neither the request nor the model sets one. */
export const DEFAULT_MAX_TOKENS = 4096;

/** OpenAI finish reasons, which is what our clients read. */
const FINISH_REASONS: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  // the model's context window filled up before max_tokens: cut short all the same
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};
export const toFinishReason = (stopReason: string | null | undefined): string =>
  (stopReason ? FINISH_REASONS[stopReason] : undefined) ?? "stop";

/** OpenAI's image_url part as a Messages image block: inline base64 data, or a URL. */
function imageBlock(part: Record<string, unknown>): Record<string, unknown> {
  const imageUrl = part.image_url as { url?: unknown } | string | undefined;
  const url = typeof imageUrl === "string" ? imageUrl : imageUrl?.url;
  if (typeof url !== "string") throw invalidParameter("messages", "an image_url part needs image_url.url");
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  // Messages knows lower-case types only (MIME types are case-insensitive: image/PNG is image/png), and image/jpeg
  // only; clients (and OpenAI, which accepts it) also write the common image/jpg
  const lowerCase = inline?.[1]?.toLowerCase();
  const mediaType = lowerCase === "image/jpg" ? "image/jpeg" : lowerCase;
  return inline
    ? { type: "image", source: { type: "base64", media_type: mediaType, data: inline[2] } }
    : { type: "image", source: { type: "url", url } };
}

/** The message's parts as Messages blocks, in the client's order (images between texts stay between them). */
function contentBlocks(m: ChatMessage, model: string): Record<string, unknown>[] {
  if (!m.parts) return m.content ? [{ type: "text", text: m.content }] : [];
  const blocks: Record<string, unknown>[] = [];
  for (const part of m.parts) {
    if (part.type === "text") {
      // Messages refuses empty text blocks; an empty text part says nothing anyway
      if (typeof part.text === "string" && part.text.length > 0) blocks.push({ type: "text", text: part.text });
    } else if (part.type === "image_url") {
      blocks.push(imageBlock(part));
    } else {
      throw invalidParameter("messages", `content parts of type '${String(part.type)}' are not supported by model '${model}'`);
    }
  }
  return blocks;
}

function parseArguments(text: string): Record<string, unknown> {
  // a call without arguments, as clients assembled it from streams that sent none (Messages' tool_use input is {})
  if (text.trim() === "") return {};
  let input: unknown;
  try {
    input = JSON.parse(text) as unknown;
  } catch {
    input = undefined;
  }
  // Messages' tool_use input is an object: valid JSON of another kind ("[1]", "null", "5") is refused here, for free
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw invalidParameter("messages", "tool_calls[].function.arguments must be a JSON object");
  }
  return input as Record<string, unknown>;
}

interface MessagesTurn {
  role: "user" | "assistant";
  content: string | Record<string, unknown>[];
}

/**
 * A tool call, and a tool's answer, as Messages blocks. Messages refuses tool_use and tool_result blocks in a request
 * that defines no tools (a last turn asking for a plain answer, the task endpoint): there they are text, which keeps
 * what was called and answered in the conversation (docs/providers.md).
 */
interface ToolBlocks {
  call(call: ToolCall): Record<string, unknown>;
  result(m: ChatMessage, model: string): Record<string, unknown>[];
}

const toolCallId = (m: ChatMessage): string => m.toolCallId ?? m.name ?? "";

const TOOL_USE_BLOCKS: ToolBlocks = {
  call: (call) => ({ type: "tool_use", id: call.id, name: call.function.name, input: parseArguments(call.function.arguments) }),
  // parts stay blocks: their texts glued into one string would run together ("line one" + "line two")
  result: (m, model) => [{ type: "tool_result", tool_use_id: toolCallId(m), content: m.parts ? contentBlocks(m, model) : m.content }],
};

const TOOL_TEXT_BLOCKS: ToolBlocks = {
  call: (call) => ({ type: "text", text: `[tool call ${call.id}] ${call.function.name}(${call.function.arguments})` }),
  result: (m, model) => [{ type: "text", text: `[tool result ${toolCallId(m)}]\n` }, ...contentBlocks(m, model)],
};

/** An OpenAI message (system ones are the `system` field) as a Messages turn; tool answers are user turns. */
function toMessagesTurn(m: ChatMessage, model: string, tool: ToolBlocks): MessagesTurn {
  const role = m.role === "assistant" ? "assistant" : "user";
  if (m.role === "tool") return { role: "user", content: tool.result(m, model) };
  if (!m.parts && !m.toolCalls) return { role, content: m.content };
  const blocks = contentBlocks(m, model);
  for (const call of m.toolCalls ?? []) blocks.push(tool.call(call));
  return { role, content: blocks };
}

const asBlocks = (content: MessagesTurn["content"]): Record<string, unknown>[] =>
  typeof content === "string" ? (content ? [{ type: "text", text: content }] : []) : content;

/**
 * Adjacent turns of one role as one turn. OpenAI sends each tool answer as a message of its own, and a system
 * message taken out from between two user messages leaves them adjacent; Messages wants every tool_use of a turn
 * answered in the very next message (all results of parallel calls in one user turn, before any text).
 */
function mergeAdjacentTurns(turns: MessagesTurn[]): MessagesTurn[] {
  const merged: MessagesTurn[] = [];
  for (const turn of turns) {
    const previous = merged.at(-1);
    if (previous?.role === turn.role) previous.content = [...asBlocks(previous.content), ...asBlocks(turn.content)];
    else merged.push({ ...turn });
  }
  return merged;
}

/**
 * Messages refuses a final assistant turn (a prefill the answer continues) whose text ends in whitespace, which
 * OpenAI accepts: that text is trimmed at its end, a text block left empty dropped (Messages refuses empty ones).
 */
function trimPrefill(turns: MessagesTurn[]): void {
  const last = turns.at(-1);
  if (last?.role !== "assistant") return;
  if (typeof last.content === "string") {
    last.content = last.content.trimEnd();
    return;
  }
  const blocks = [...last.content];
  for (let block = blocks.at(-1); block?.type === "text" && typeof block.text === "string"; block = blocks.at(-1)) {
    const text = block.text.trimEnd();
    if (text.length > 0) {
      blocks[blocks.length - 1] = { ...block, text };
      break;
    }
    blocks.pop();
  }
  last.content = blocks;
}

interface OpenAiTool {
  type?: unknown;
  function?: { name?: unknown; description?: unknown; parameters?: unknown };
}

/**
 * A function's `parameters` as a Messages `input_schema`, which must say `type: "object"`. OpenAI reads a schema
 * without a type (`{}`, the empty parameter list some clients write) as an object's; so does this.
 */
function inputSchema(parameters: unknown): unknown {
  if (parameters == null) return { type: "object", properties: {} };
  if (typeof parameters === "object" && !Array.isArray(parameters) && !("type" in parameters)) return { type: "object", ...parameters };
  return parameters;
}

/** OpenAI `tools` (functions) as Messages tools. */
function toTools(tools: unknown): Record<string, unknown>[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  return (tools as OpenAiTool[]).map((tool, i) => {
    const fn = tool.function;
    if (tool.type !== "function" || typeof fn?.name !== "string") throw invalidParameter(`tools[${i}]`, "must be a function tool with a name");
    const out: Record<string, unknown> = { name: fn.name, input_schema: inputSchema(fn.parameters) };
    if (typeof fn.description === "string") out.description = fn.description;
    return out;
  });
}

/** OpenAI `tool_choice` (and `parallel_tool_calls: false`) as a Messages tool_choice. */
function toToolChoice(choice: unknown, parallel: unknown): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  if (choice === "auto") out = { type: "auto" };
  else if (choice === "required") out = { type: "any" };
  else if (choice === "none") out = { type: "none" };
  else if (typeof choice === "object" && choice !== null) {
    const name = (choice as { function?: { name?: unknown } }).function?.name;
    if (typeof name !== "string") throw invalidParameter("tool_choice", "must name a function");
    out = { type: "tool", name };
  }
  // Messages' "none" takes no other field (no call, so nothing to run in parallel)
  if (parallel === false && out?.type !== "none") out = { ...(out ?? { type: "auto" }), disable_parallel_tool_use: true };
  return out;
}

/** Messages' metadata.user_id is at most this long. */
const ANTHROPIC_USER_ID_MAX = 256;

/**
 * OpenAI fields Messages has no equivalent for and whose dropping would change what the answer is: the client would
 * read log probabilities that never come, parse JSON it never asked the model for in words, or get text past its
 * whitespace stop sequence. Refused, naming the field; so are the sampling controls without an equivalent (a seed,
 * non-zero presence/frequency penalties, token biases): CONTRACT 9 wants them refused rather than dropped (docs/api.md).
 */
function refuseUnsupported(passthrough: Record<string, unknown> | undefined, model: string): void {
  if (passthrough?.logprobs === true) {
    throw invalidParameter("logprobs", `is not supported by model '${model}' (its protocol returns no log probabilities)`);
  }
  // sampling controls Messages has no form for (CONTRACT 9: refused, never dropped); their defaults ask for nothing
  if (passthrough?.seed != null) throw invalidParameter("seed", `is not supported by model '${model}' (its protocol has no seed)`);
  for (const penalty of ["presence_penalty", "frequency_penalty"]) {
    const value = passthrough?.[penalty];
    if (typeof value === "number" && value !== 0) throw invalidParameter(penalty, `is not supported by model '${model}' (its protocol has no ${penalty.replace("_", " ")}; 0 is accepted)`);
  }
  const bias = passthrough?.logit_bias;
  if (bias != null && typeof bias === "object" && Object.keys(bias).length > 0) {
    throw invalidParameter("logit_bias", `is not supported by model '${model}' (its protocol has no token biases)`);
  }
  // OpenAI's legacy function calling: left out, the model would never see the functions offered (or forced)
  for (const legacy of ["functions", "function_call"]) {
    if (passthrough?.[legacy] != null) throw invalidParameter(legacy, `is not supported by model '${model}'; send 'tools' and 'tool_choice' instead`);
  }
  // Messages refuses a stop sequence of whitespace alone; dropping it would let the answer run past where it should stop
  const stop = passthrough?.stop;
  const stops: unknown[] = typeof stop === "string" ? [stop] : Array.isArray(stop) ? stop : [];
  if (stops.some((s) => typeof s === "string" && s.trim() === "")) {
    throw invalidParameter("stop", `sequences of whitespace alone are not supported by model '${model}' (each needs a non-whitespace character)`);
  }
  // `user` becomes metadata.user_id, which Messages caps at 256 characters (OpenAI's `user` has no such cap)
  const user = passthrough?.user;
  if (typeof user === "string" && user.length > ANTHROPIC_USER_ID_MAX) {
    throw invalidParameter("user", `must have at most ${ANTHROPIC_USER_ID_MAX} characters for model '${model}' (its protocol's limit for the end-user id)`);
  }
  const format = (passthrough?.response_format as { type?: unknown } | null | undefined)?.type;
  if (format !== undefined && format !== "text") {
    throw invalidParameter("response_format", `type '${String(format)}' is not supported by model '${model}'; ask for JSON in the messages instead`);
  }
}

export function buildMessagesRequest(endpoint: Endpoint, upstreamModel: string, req: ChatRequest, stream: boolean, defaultMaxTokens: number): BuiltRequest {
  // Messages takes the system prompt as a field of its own, not as a message: a string, or text blocks when the
  // client sent parts (their texts joined into one string would run together).
  const systemMessages = req.messages.filter((m) => m.role === "system");
  const system = systemMessages.some((m) => m.parts)
    ? systemMessages.flatMap((m) => contentBlocks(m, req.model.id))
    : systemMessages.map((m) => m.content).join("\n\n");
  const tools = toTools(req.passthrough?.tools);
  const toolBlocks = tools && tools.length > 0 ? TOOL_USE_BLOCKS : TOOL_TEXT_BLOCKS;
  const messages = mergeAdjacentTurns(req.messages.filter((m) => m.role !== "system").map((m) => toMessagesTurn(m, req.model.id, toolBlocks)));
  // Messages refuses a conversation of system prompts alone: say so before any call (and any hold).
  if (messages.length === 0) throw invalidParameter("messages", `needs at least one user or assistant message for model '${req.model.id}'`);
  trimPrefill(messages);
  const body: Record<string, unknown> = { model: upstreamModel, max_tokens: req.maxTokens ?? defaultMaxTokens, messages };
  if (system.length > 0) body.system = system;
  // Anthropic's range is 0..1 where OpenAI's is 0..2: clamp rather than reject a valid OpenAI value.
  if (req.temperature !== undefined) body.temperature = Math.min(req.temperature, 1);
  refuseUnsupported(req.passthrough, req.model.id);
  const topP = req.passthrough?.top_p;
  if (typeof topP === "number") body.top_p = topP;
  // Messages' own sampling field, set by /v1/messages (the Messages API's own requests)
  const topK = req.passthrough?.top_k;
  if (typeof topK === "number") body.top_k = topK;
  const stop = req.passthrough?.stop;
  if (typeof stop === "string") body.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) body.stop_sequences = stop.filter((s) => typeof s === "string");
  const user = req.passthrough?.user;
  if (typeof user === "string" && user.length > 0) body.metadata = { user_id: user };
  if (tools) body.tools = tools;
  const toolChoice = toToolChoice(req.passthrough?.tool_choice, req.passthrough?.parallel_tool_calls);
  if (toolChoice && tools) body.tool_choice = toolChoice;
  if (stream) body.stream = true;
  return {
    url: `${endpoint.baseUrl}/v1/messages`,
    headers: { "content-type": "application/json", "x-api-key": endpoint.apiKey, "anthropic-version": ANTHROPIC_VERSION },
    body: JSON.stringify(body),
  };
}

interface MessagesUsage {
  input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/**
 * The prompt's tokens: Messages reports those written to and read from its prompt cache apart from `input_tokens`,
 * yet all of them are prompt the upstream processed and bills (OpenAI's prompt_tokens includes its cached tokens).
 */
function promptTokens(usage: MessagesUsage | null | undefined): number | undefined {
  if (usage?.input_tokens == null) return undefined;
  return usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}

/**
 * OpenAI's breakdown of the prompt: the tokens Messages read from its prompt cache are OpenAI's `cached_tokens`
 * (cache writes are not: they were processed in full). Only when the upstream reported its cache reads.
 */
function usageDetails(usage: MessagesUsage | null | undefined): Record<string, unknown> | undefined {
  const read = usage?.cache_read_input_tokens;
  return read == null ? undefined : { prompt_tokens_details: { cached_tokens: read } };
}

/**
 * A Messages answer in OpenAI's shape. Usage is what the upstream reported: an Anthropic-compatible server that
 * reports none leaves it to the adapter to count (docs/providers.md, Usage), as a stream without usage is counted.
 */
export function parseMessagesResponse(json: unknown): Omit<ChatResult, "usage"> & { usage: PartialUsage } {
  const parsed = messageResponseSchema.safeParse(json);
  if (!parsed.success) throw wrongShape("messages");
  let content = "";
  const toolCalls: ToolCall[] = [];
  for (const block of parsed.data.content) {
    if (block.type === "text") content += block.text ?? "";
    else if (block.type === "tool_use") {
      if (block.id === undefined || block.name === undefined) throw wrongShape("messages");
      toolCalls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  // refusal is always present in OpenAI's message (null unless the model refused); clients test it against null
  const message: Record<string, unknown> = { role: "assistant", content: content || (toolCalls.length > 0 ? null : ""), refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const details = usageDetails(parsed.data.usage);
  const stopSequence = parsed.data.stop_reason === "stop_sequence" && typeof parsed.data.stop_sequence === "string" ? parsed.data.stop_sequence : undefined;
  return {
    content,
    message,
    finishReason: toFinishReason(parsed.data.stop_reason),
    ...(stopSequence !== undefined ? { stopSequence } : {}),
    usage: { promptTokens: promptTokens(parsed.data.usage), completionTokens: parsed.data.usage?.output_tokens ?? undefined },
    ...(details ? { usageDetails: details } : {}),
  };
}

/**
 * A parser for one Messages stream. Stateful: tool_use blocks become OpenAI tool_calls deltas, numbered in the
 * order they start (OpenAI's `index`), their input JSON streamed as `arguments` fragments.
 */
export function messagesStreamParser(): (event: SseEvent) => StreamPiece[] {
  const toolIndexOfBlock = new Map<number, number>();
  /** tool blocks that streamed some input JSON */
  const blocksWithInput = new Set<number>();
  const argumentsDelta = (index: number, fragment: string): StreamPiece =>
    ({ kind: "delta", content: "", delta: { content: null, tool_calls: [{ index, function: { arguments: fragment } }] } });
  return (event) => {
    let json: unknown;
    try {
      json = JSON.parse(event.data);
    } catch {
      throw wrongShape("stream");
    }
    const parsed = streamEventSchema.safeParse(json);
    if (!parsed.success) {
      // New event types are announced as additive; skip them rather than fail a paying request.
      if (typeof json === "object" && json !== null && typeof (json as { type?: unknown }).type === "string") return [];
      throw wrongShape("stream");
    }
    const data = parsed.data;
    switch (data.type) {
      case "message_start":
        return [{ kind: "usage", promptTokens: promptTokens(data.message.usage), completionTokens: undefined, details: usageDetails(data.message.usage) }];
      case "content_block_start": {
        const block = data.content_block;
        if (block.type !== "tool_use") return [];
        const index = toolIndexOfBlock.size;
        toolIndexOfBlock.set(data.index ?? index, index);
        const call = { index, id: block.id ?? "", type: "function", function: { name: block.name ?? "", arguments: "" } };
        return [{ kind: "delta", content: "", delta: { content: null, tool_calls: [call] } }];
      }
      case "content_block_delta": {
        if (data.delta.type === "text_delta") return data.delta.text ? [{ kind: "delta", content: data.delta.text }] : [];
        const index = toolIndexOfBlock.get(data.index ?? -1);
        if (data.delta.type !== "input_json_delta" || index === undefined || !data.delta.partial_json) return [];
        blocksWithInput.add(data.index ?? -1);
        return [argumentsDelta(index, data.delta.partial_json)];
      }
      case "content_block_stop": {
        // A tool without parameters streams no input JSON (only an empty fragment): its arguments are "{}", as
        // unstreamed, not "" (which clients fail to parse and cannot send back).
        const block = data.index ?? -1;
        const index = toolIndexOfBlock.get(block);
        return index === undefined || blocksWithInput.has(block) ? [] : [argumentsDelta(index, "{}")];
      }
      case "message_delta": {
        const pieces: StreamPiece[] = [];
        const stopSequence = data.delta.stop_reason === "stop_sequence" && typeof data.delta.stop_sequence === "string" ? data.delta.stop_sequence : undefined;
        if (data.delta.stop_reason) pieces.push({ kind: "finish", reason: toFinishReason(data.delta.stop_reason), ...(stopSequence !== undefined ? { stopSequence } : {}) });
        // message_delta's output_tokens is cumulative
        if (data.usage?.output_tokens !== undefined) pieces.push({ kind: "usage", completionTokens: data.usage.output_tokens, promptTokens: promptTokens(data.usage), details: usageDetails(data.usage) });
        return pieces;
      }
      case "message_stop":
        return [{ kind: "end" }];
      case "error":
        // an error event without its SSE name (streamFailure reads the named ones before they get here)
        throw streamErrorOf(data.error).error;
      default:
        return [];
    }
  };
}

/** The HTTP status each Messages error type stands for (docs: errors), so an in-stream error is treated like it. */
const ERROR_TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

function streamErrorOf(error: { type?: string; message?: string }): StreamFailure {
  const status = (error.type ? ERROR_TYPE_STATUS[error.type] : undefined) ?? 500;
  return new StreamFailure(status, upstreamStatusError(status, error.message));
}

/**
 * Messages' `error` event (overloaded_error mid-stream, say) for the upstream client, which retries it like the
 * status it stands for as long as nothing reached the client. Only events named `error` are read.
 */
export function streamFailure(event: SseEvent): StreamFailure | undefined {
  if (event.event !== "error") return undefined;
  let json: unknown;
  try {
    json = JSON.parse(event.data);
  } catch {
    json = undefined;
  }
  const parsed = errorEventSchema.safeParse(json);
  return streamErrorOf(parsed.success ? parsed.data.error : {});
}

/** Messages' `ping`: sent to keep the connection open, it says nothing about the answer's progress. */
export const isPing = (event: SseEvent): boolean => event.event === "ping";

export function parseError(status: number, body: string): AppError {
  return upstreamStatusError(status, readErrorMessage(body, errorMessage));
}
