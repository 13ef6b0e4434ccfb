// A fake Anthropic Messages upstream (POST /v1/messages, streaming included).
import { randomUUID } from "node:crypto";
import { fakeChatReply, fakeToolCall, type FakeMessage } from "./deterministic";
import { FakeServer, sendBody, sendJson, writeSse, type HandlerContext } from "./fake-server";

interface MessagesBody {
  model?: unknown;
  messages?: unknown;
  system?: unknown;
  max_tokens?: unknown;
  stream?: unknown;
  tools?: Array<{ name?: unknown; input_schema?: { properties?: unknown } }>;
  tool_choice?: { type?: unknown };
  stop_sequences?: unknown[];
}

const STOP_REASONS = { stop: "end_turn", length: "max_tokens" } as const;

type FakeCall = NonNullable<ReturnType<typeof fakeToolCall>>;

const takesNoInput = (tool: { input_schema?: { properties?: unknown } } | undefined): boolean =>
  Object.keys((tool?.input_schema?.properties ?? {}) as object).length === 0;

const sseEvent = (name: string, data: Record<string, unknown>) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;

/** A tool without parameters is called with `{}`, which Messages streams as empty input_json_delta fragments. */
const withoutInput = (call: FakeCall): FakeCall => ({ ...call, arguments: "{}", fragments: ["", ""] });

type Block = { type?: unknown; id?: unknown; tool_use_id?: unknown; input?: unknown };

/**
 * Messages' rule for tools: every tool_use of an assistant turn is answered by a tool_result in the very next message
 * (parallel calls: all results in that one user turn). Its refusal, as Messages words it, or undefined.
 */
function unansweredToolUse(messages: readonly FakeMessage[]): string | undefined {
  const blocksOf = (m: FakeMessage | undefined): Block[] => (Array.isArray(m?.content) ? (m.content as Block[]) : []);
  for (const [i, m] of messages.entries()) {
    if (m.role !== "assistant") continue;
    const answered = new Set(blocksOf(messages[i + 1]).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id));
    const missing = blocksOf(m).filter((b) => b.type === "tool_use" && !answered.has(b.id)).map((b) => String(b.id));
    if (missing.length > 0 && i + 1 < messages.length) {
      return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. ` +
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.";
    }
  }
  return undefined;
}

/** Messages reads tool_use and tool_result blocks only against the tools the request defines. */
const hasToolBlocks = (messages: readonly FakeMessage[]): boolean =>
  messages.some((m) => Array.isArray(m.content) && (m.content as Block[]).some((b) => b.type === "tool_use" || b.type === "tool_result"));

/** Messages' tool_use input is an object ("Input should be a valid dictionary"): the index of a turn with another, or -1. */
const nonObjectToolInput = (messages: readonly FakeMessage[]): number =>
  messages.findIndex((m) => Array.isArray(m.content) && (m.content as Block[]).some((b) =>
    b.type === "tool_use" && (typeof b.input !== "object" || b.input === null || Array.isArray(b.input))));

/** Messages refuses a prefill (the final assistant turn) whose text ends in whitespace. */
function endsInWhitespace(messages: readonly FakeMessage[]): boolean {
  const last = messages.at(-1);
  if (last?.role !== "assistant") return false;
  const lastBlock = Array.isArray(last.content) ? (last.content as Array<{ type?: unknown; text?: unknown }>).at(-1) : undefined;
  const text = typeof last.content === "string" ? last.content : lastBlock?.type === "text" ? lastBlock.text : undefined;
  return typeof text === "string" && /\s$/.test(text);
}

export class FakeAnthropic extends FakeServer {
  /**
   * Of each answer's prompt tokens, this many are reported as cache writes and reads, as Messages does: apart from
   * `input_tokens`, which keeps the rest (so the three still add up to the prompt's words).
   */
  cachedPromptTokens: { creation: number; read: number } | undefined;
  /** the next this many streams answer 200, message_start, then an `overloaded_error` event (Messages' in-stream 529) */
  overloadedStreams = 0;
  /** Set: text answers (streamed or not) end with this stop_reason instead of end_turn / max_tokens */
  stopReason: string | undefined = undefined;
  /** Set: text answers end with stop_reason `stop_sequence` naming this sequence */
  stopSequence: string | undefined = undefined;

  constructor(readonly apiKey: string) {
    super();
  }

  protected override resetOptions(): void {
    this.cachedPromptTokens = undefined;
    this.overloadedStreams = 0;
    this.stopReason = undefined;
    this.stopSequence = undefined;
  }

  /** Messages usage of a prompt: input_tokens, plus the cache fields when cachedPromptTokens is set. */
  private promptUsage(promptTokens: number): Record<string, number> {
    const cached = this.cachedPromptTokens;
    if (!cached) return { input_tokens: promptTokens };
    return {
      input_tokens: promptTokens - cached.creation - cached.read,
      cache_creation_input_tokens: cached.creation,
      cache_read_input_tokens: cached.read,
    };
  }

  protected errorBody(status: number, message: string): unknown {
    const type = status === 529 ? "overloaded_error" : status >= 500 ? "api_error" : status === 429 ? "rate_limit_error" : "invalid_request_error";
    return { type: "error", error: { type, message } };
  }

  protected async route(ctx: HandlerContext): Promise<boolean> {
    if (ctx.req.headers["x-api-key"] !== this.apiKey) {
      sendJson(ctx.res, 401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
      return true;
    }
    if (ctx.req.headers["anthropic-version"] !== "2023-06-01") {
      sendJson(ctx.res, 400, this.errorBody(400, "anthropic-version header is required"));
      return true;
    }
    if (ctx.record.method === "GET" && ctx.url.pathname === "/v1/models") {
      sendJson(ctx.res, 200, { data: [{ id: "fake-claude", type: "model" }], has_more: false });
      return true;
    }
    if (ctx.record.method !== "POST" || ctx.url.pathname !== "/v1/messages") return false;
    await this.messages(ctx, (ctx.record.json ?? {}) as MessagesBody);
    return true;
  }

  private async messages(ctx: HandlerContext, body: MessagesBody): Promise<void> {
    const messages = body.messages as FakeMessage[] | undefined;
    if (!Array.isArray(messages) || messages.length === 0 || messages.some((m) => m.role === "system")) {
      return sendJson(ctx.res, 400, this.errorBody(400, "messages: non-empty, user/assistant roles only"));
    }
    if (typeof body.max_tokens !== "number") return sendJson(ctx.res, 400, this.errorBody(400, "max_tokens: Field required"));
    if (Array.isArray(body.stop_sequences) && body.stop_sequences.some((stop) => typeof stop !== "string" || stop.trim() === "")) {
      return sendJson(ctx.res, 400, this.errorBody(400, "stop_sequences: each stop sequence must contain non-whitespace"));
    }
    // Messages' {type: "none"} choice has no disable_parallel_tool_use (nor any other field)
    const choice = body.tool_choice;
    const extra = choice?.type === "none" ? Object.keys(choice).find((key) => key !== "type") : undefined;
    if (extra !== undefined) return sendJson(ctx.res, 400, this.errorBody(400, `tool_choice.none.${extra}: Extra inputs are not permitted`));
    if (hasToolBlocks(messages) && !(Array.isArray(body.tools) && body.tools.length > 0)) {
      return sendJson(ctx.res, 400, this.errorBody(400, "Requests which include `tool_use` or `tool_result` blocks must define tools."));
    }
    const badInput = nonObjectToolInput(messages);
    if (badInput >= 0) return sendJson(ctx.res, 400, this.errorBody(400, `messages.${badInput}.content.tool_use.input: Input should be a valid dictionary`));
    if (endsInWhitespace(messages)) return sendJson(ctx.res, 400, this.errorBody(400, "messages: final assistant content cannot end with trailing whitespace"));
    const unanswered = unansweredToolUse(messages);
    if (unanswered !== undefined) return sendJson(ctx.res, 400, this.errorBody(400, unanswered));
    if (body.stream === true && this.overloadedStreams > 0) {
      this.overloadedStreams--;
      return writeSse(ctx, [
        sseEvent("message_start", { message: { id: `msg_${randomUUID()}`, type: "message", role: "assistant", model: String(body.model), content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
        sseEvent("error", { error: { type: "overloaded_error", message: "Overloaded" } }),
      ], () => this.pause());
    }
    // the system prompt is a string or a list of text blocks
    const system = typeof body.system === "string" ? body.system
      : Array.isArray(body.system) ? (body.system as Array<{ text?: unknown }>).map((b) => (typeof b.text === "string" ? b.text : "")).join(" ") : "";
    const reply = fakeChatReply(messages, body.max_tokens, system);
    const id = `msg_${randomUUID()}`;
    const model = String(body.model);
    const toolName = Array.isArray(body.tools) && typeof body.tools[0]?.name === "string" ? body.tools[0].name : undefined;
    const call = body.tool_choice?.type === "none" ? undefined : fakeToolCall(messages, toolName, system);
    if (call) return this.toolUse(ctx, body, { id, model, call: takesNoInput(body.tools?.[0]) ? withoutInput(call) : call });
    const stopReason = this.stopSequence !== undefined ? "stop_sequence" : (this.stopReason ?? STOP_REASONS[reply.finishReason]);
    const stopSequence = this.stopSequence ?? null;
    if (body.stream !== true) {
      return sendBody(ctx, "application/json", JSON.stringify({
        id, type: "message", role: "assistant", model,
        content: [{ type: "text", text: reply.content }],
        stop_reason: stopReason, stop_sequence: stopSequence,
        usage: { ...this.promptUsage(reply.promptTokens), output_tokens: reply.completionTokens },
      }));
    }
    const events = [
      sseEvent("message_start", {
        message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, usage: { ...this.promptUsage(reply.promptTokens), output_tokens: 1 } },
      }),
      sseEvent("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      sseEvent("ping", {}),
      ...reply.pieces.map((text) => sseEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text } })),
      sseEvent("content_block_stop", { index: 0 }),
      sseEvent("message_delta", { delta: { stop_reason: stopReason, stop_sequence: stopSequence }, usage: { output_tokens: reply.completionTokens } }),
      sseEvent("message_stop", {}),
    ];
    await writeSse(ctx, events, () => this.pause());
  }

  /** Offered tools and asked by the user: the fake calls the first tool (a tool_use block; streamed as input_json_delta). */
  private async toolUse(ctx: HandlerContext, body: MessagesBody, opts: { id: string; model: string; call: FakeCall }): Promise<void> {
    const { id, model, call } = opts;
    const usage = { ...this.promptUsage(call.promptTokens), output_tokens: call.completionTokens };
    if (body.stream !== true) {
      return sendBody(ctx, "application/json", JSON.stringify({
        id, type: "message", role: "assistant", model,
        content: [{ type: "tool_use", id: call.id, name: call.name, input: JSON.parse(call.arguments) as unknown }],
        stop_reason: "tool_use", stop_sequence: null, usage,
      }));
    }
    await writeSse(ctx, [
      sseEvent("message_start", { message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, usage: { ...this.promptUsage(call.promptTokens), output_tokens: 1 } } }),
      sseEvent("content_block_start", { index: 0, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } }),
      ...call.fragments.map((partial_json) => sseEvent("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json } })),
      sseEvent("content_block_stop", { index: 0 }),
      sseEvent("message_delta", { delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: call.completionTokens } }),
      sseEvent("message_stop", {}),
    ], () => this.pause());
  }
}
