import type { Response } from "express";
import { completionBudget, completionPromptTokens, countPromptTokens, meteredTextStream, type EventSink, type TextStream } from "@gw/gateway";
import type { ChatStreamEncoder, ChatStreamEvent, TextUsage } from "@gw/providers";
import { type AppError, microsToDollars, nestedErrorBody } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { GATEWAY_MODEL_HEADER } from "../http/answer-headers";
import { chatRequest, completionRequest, type CompletionCall, type TextCall } from "./text";
import type { RequestMeta } from "./request-meta";

export interface StreamFormat {
  /** `chat.completion.chunk` on /v1/chat/completions, `task.completion.chunk` on the task endpoint, `text_completion` on /v1/completions */
  object: string;
  id: string;
  created: number;
  includeUsage: boolean;
}

/** The event that closes an OpenAI-style stream, as written. */
export const DONE_EVENT = "data: [DONE]\n\n";
/**
 * `res.locals` key of the text that closes a complete stream, written in one piece: Idempotency-Key's recorder holds
 * it back until the answer is stored, as it does `[DONE]`.
 */
export const CLOSING_EVENTS = "closingEvents";

/**
 * The status and headers of an event stream (a replayed one too). No `Connection` header: Node's own honours a client's
 * `Connection: close` (and HTTP/1.0), closing the connection once the stream ends, where a fixed `keep-alive` kept it open.
 */
export function setEventStreamHeaders(res: Response, headers: Record<string, string>): void {
  res.status(200);
  res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
  // never stored (docs/api.md: no-store under /api), never recompressed or buffered by a proxy
  res.setHeader("Cache-Control", "no-store, no-transform");
  res.setHeader("X-Accel-Buffering", "no");
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
}

type TextDelta = Extract<ChatStreamEvent, { type: "delta" }>;
type ChatDoneEvent = Extract<ChatStreamEvent, { type: "done" }>;

/** How a stream's choices are spelled in its chunks: a chat delta or a legacy completion's text. */
interface ChoiceShape {
  /** the choice sent with the status line, before any output (chat: the assistant's role) */
  opening?(index: number): Record<string, unknown>;
  output(event: TextDelta): Record<string, unknown>;
  finish(reason: string, index: number): Record<string, unknown>;
}

const CHAT_CHOICE: ChoiceShape = {
  opening: (index) => ({ index, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }),
  // tool-call fragments, refusals, logprobs: passed on as the upstream sent them
  output: (event) => ({ index: event.index ?? 0, delta: event.delta ?? { content: event.content }, logprobs: event.logprobs ?? null, finish_reason: null }),
  finish: (reason, index) => ({ index, delta: {}, logprobs: null, finish_reason: reason }),
};

/** OpenAI's legacy completions stream: text chunks, then the finish reason on a chunk of empty text. */
const COMPLETION_CHOICE: ChoiceShape = {
  output: (event) => ({ text: event.content, index: 0, logprobs: event.logprobs ?? null, finish_reason: null }),
  finish: (reason) => ({ text: "", index: 0, logprobs: null, finish_reason: reason }),
};

/** Writes a stream's events to the client as server-sent events, paced by how fast it reads. */
class SseWriter implements EventSink {
  constructor(private readonly res: Response) {}

  open(model: string): void {
    setEventStreamHeaders(this.res, { [GATEWAY_MODEL_HEADER]: model });
    this.res.flushHeaders();
  }

  write(events: string): void {
    if (events.length === 0 || this.res.destroyed || this.res.writableEnded) return;
    this.res.write(events);
  }

  /** The events that close a complete answer, then the end of the response. */
  close(events: string): void {
    this.res.locals[CLOSING_EVENTS] = events;
    this.write(events);
    this.end();
  }

  /** The client is not reading as fast as the upstream writes: what was written waits in the gateway's memory. */
  get backedUp(): boolean {
    return this.res.writableNeedDrain && !this.res.destroyed;
  }

  /**
   * Waits until the client has read what waits for it, so the upstream is read no faster than the client reads
   * (undici then stops reading its socket: TCP backpressure reaches the upstream). A client that reads nothing for
   * `timeoutMs` is dropped: its connection is destroyed, which cancels the upstream call.
   */
  async drained(timeoutMs: number): Promise<void> {
    const res = this.res;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        res.off("drain", done).off("close", done);
        resolve();
      };
      const timer = setTimeout(() => {
        res.destroy();
        done();
      }, timeoutMs);
      res.on("drain", done).on("close", done);
    });
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }
}

/** OpenAI-style chunks (`data: {chunk}`, then `data: [DONE]`) of either choice shape. */
class OpenAiChunkEncoder implements ChatStreamEncoder {
  /** the upstream's kept top-level fields (system_fingerprint, service_tier), written on every chunk as OpenAI does */
  private fields: Record<string, unknown> | undefined;

  /**
   * `model`: the model asked for, until the first event names the one that serves (CONTRACT 13: a fallback's id once
   * it took over); `choices`: how many answers stream interleaved (chat's `n`)
   */
  constructor(private readonly shape: ChoiceShape, private readonly format: StreamFormat, private model: string, private readonly choices = 1) {}

  private data(payload: unknown): string {
    return `data: ${JSON.stringify(payload)}\n\n`;
  }

  private chunk(choice: Record<string, unknown>): string {
    return this.data({
      id: this.format.id, object: this.format.object, created: this.format.created, model: this.model, ...this.fields,
      choices: [choice],
      ...(this.format.includeUsage ? { usage: null } : {}),
    });
  }

  private usage(usage: TextUsage, costMicros: number, details?: Record<string, unknown>): string {
    if (!this.format.includeUsage) return "";
    return this.data({
      id: this.format.id, object: this.format.object, created: this.format.created, model: this.model, ...this.fields, choices: [],
      usage: {
        prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens,
        ...details,
        // Headers left before the cost was known, so a stream reports it here (dollars).
        cost: microsToDollars(costMicros),
      },
    });
  }

  /** the opening chunk carries the fields of the event that opened the stream, as every chunk does */
  open(first: ChatStreamEvent): string {
    if (first.fields) this.fields = first.fields;
    if (first.served) this.model = first.served.model.id;
    let opening = "";
    for (let index = 0; this.shape.opening && index < this.choices; index++) opening += this.chunk(this.shape.opening(index));
    return opening;
  }

  delta(event: TextDelta): string {
    if (event.fields) this.fields = event.fields;
    return this.chunk(this.shape.output(event));
  }

  finish(done: ChatDoneEvent, costMicros: number): string {
    if (done.fields) this.fields = done.fields;
    let finish = this.chunk(this.shape.finish(done.finishReason, 0));
    for (let index = 1; index < this.choices; index++) finish += this.chunk(this.shape.finish(done.moreFinishReasons?.[index - 1] ?? done.finishReason, index));
    return finish + this.usage(done.usage, costMicros, done.usageDetails) + DONE_EVENT;
  }

  /** a client that asked for usage learns what the cut stream was charged, then why it ended */
  cut(produced: TextUsage, costMicros: number, error: AppError): string {
    return this.usage(produced, costMicros) + this.data(nestedErrorBody(error));
  }
}

/**
 * A streamed chat answer. The status line is sent with the first output (a text or tool-call delta, not the
 * upstream's role chunk or message_start), so a failure before any output is still a plain JSON error (and costs nothing).
 */
export async function streamChat(deps: GatewayDeps, meta: RequestMeta, res: Response, call: TextCall, format: StreamFormat): Promise<void> {
  // `n` answers stream interleaved in one upstream call (OpenAI's protocol; routes/chat.ts refuses it for the others)
  await streamChatAs(deps, meta, res, call, () => new OpenAiChunkEncoder(CHAT_CHOICE, format, call.model.id, call.n ?? 1));
}

/**
 * A streamed chat answer in another API's events (Messages, Responses): the same hold, charge and pacing as
 * streamChat. `encoder` is given the prompt as counted (Messages' message_start reports it before the upstream has).
 */
export async function streamChatAs(deps: GatewayDeps, meta: RequestMeta, res: Response, call: TextCall, encoder: (promptTokens: number) => ChatStreamEncoder): Promise<void> {
  const promptTokens = countPromptTokens(deps, call);
  const budget = completionBudget(call.model, promptTokens, call.maxTokens, call.maxTokensParam, call.promptParam);
  const request = chatRequest(call, meta, budget);
  deps.providers.checkChat(request);
  await streamText(deps, meta, res, {
    model: call.model, promptTokens, worstCase: { promptTokens, completionTokens: budget * (call.n ?? 1) }, events: () => deps.providers.chatStream(request),
  }, encoder(promptTokens));
}

/** A streamed legacy completion (`text_completion` chunks of text), held, charged and paced as a chat stream. */
export async function streamCompletion(deps: GatewayDeps, meta: RequestMeta, res: Response, call: CompletionCall, format: StreamFormat): Promise<void> {
  // a completions prompt has no chat framing: the window fits its text alone, and a cut stream pays its text alone
  const { tokens: promptTokens, held } = completionPromptTokens(deps, call.prompt, call.suffix);
  const budget = completionBudget(call.model, promptTokens, call.maxTokens, "max_tokens", "prompt");
  const request = completionRequest(call, meta);
  await streamText(deps, meta, res, {
    model: call.model, promptTokens, worstCase: { promptTokens: held, completionTokens: budget },
    events: () => deps.providers.completionStream(request), echoed: call.passthrough?.echo === true ? call.prompt : undefined,
  }, new OpenAiChunkEncoder(COMPLETION_CHOICE, format, call.model.id));
}

/** One streamed text answer, metered (hold, upstream, settle or release) and written to the client as server-sent events. */
function streamText(deps: GatewayDeps, meta: RequestMeta, res: Response, stream: TextStream, encoder: ChatStreamEncoder): Promise<void> {
  return meteredTextStream(deps.metering, meta, new SseWriter(res), stream, encoder);
}
