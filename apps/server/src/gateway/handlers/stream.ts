import type { Response } from "express";
import type { ModelDefinition } from "@gw/config";
import { StreamInterruptedError, deltaOutputText, withoutEcho, type ChatStreamEvent, type TextUsage } from "@gw/providers";
import { microsToDollars, nestedErrorBody, toAppError } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { CreditHold } from "../money/hold";
import { textCost } from "../money/pricing";
import { chatRequest, completionBudget, completionPromptTokens, completionRequest, countPromptTokens, type CompletionCall, type TextCall } from "./text";
import { usageRecord, type RequestMeta } from "./request-meta";

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

/** How a stream's one choice is spelled in its chunks: a chat delta or a legacy completion's text. */
interface ChoiceShape {
  /** the choice sent with the status line, before any output (chat: the assistant's role) */
  opening?: Record<string, unknown>;
  output(event: TextDelta): Record<string, unknown>;
  finish(reason: string): Record<string, unknown>;
}

const CHAT_CHOICE: ChoiceShape = {
  opening: { index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null },
  // tool-call fragments, refusals, logprobs: passed on as the upstream sent them
  output: (event) => ({ index: 0, delta: event.delta ?? { content: event.content }, logprobs: event.logprobs ?? null, finish_reason: null }),
  finish: (reason) => ({ index: 0, delta: {}, logprobs: null, finish_reason: reason }),
};

/** OpenAI's legacy completions stream: text chunks, then the finish reason on a chunk of empty text. */
const COMPLETION_CHOICE: ChoiceShape = {
  output: (event) => ({ text: event.content, index: 0, logprobs: event.logprobs ?? null, finish_reason: null }),
  finish: (reason) => ({ text: "", index: 0, logprobs: null, finish_reason: reason }),
};

/** Writes OpenAI-style server-sent events. */
class SseWriter {
  /** the upstream's kept top-level fields (system_fingerprint, service_tier), written on every chunk as OpenAI does */
  fields: Record<string, unknown> | undefined;

  constructor(private readonly res: Response, private readonly format: StreamFormat, private readonly model: string) {}

  open(headers: Record<string, string>): void {
    setEventStreamHeaders(this.res, headers);
    this.res.flushHeaders();
  }

  private write(payload: string): void {
    this.writeEvent(`data: ${payload}\n\n`);
  }

  private writeEvent(event: string): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    this.res.write(event);
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

  chunk(choice: Record<string, unknown>): void {
    this.write(JSON.stringify({
      id: this.format.id, object: this.format.object, created: this.format.created, model: this.model, ...this.fields,
      choices: [choice],
      ...(this.format.includeUsage ? { usage: null } : {}),
    }));
  }

  usage(usage: TextUsage, costMicros: number, details?: Record<string, unknown>): void {
    this.write(JSON.stringify({
      id: this.format.id, object: this.format.object, created: this.format.created, model: this.model, ...this.fields, choices: [],
      usage: {
        prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens,
        ...details,
        // Headers left before the cost was known, so a stream reports it here (dollars).
        cost: microsToDollars(costMicros),
      },
    }));
  }

  error(err: unknown): void {
    this.write(JSON.stringify(nestedErrorBody(toAppError(err))));
  }

  done(): void {
    this.writeEvent(DONE_EVENT);
    if (!this.res.writableEnded) this.res.end();
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }

}

/** What one streamed text call is: its model, its prompt as counted, the worst case held, and its upstream events. */
interface TextStream {
  model: ModelDefinition;
  /** the gateway's count of the prompt: what a cut stream is charged for it when the upstream reported none */
  promptTokens: number;
  /** held before the upstream call */
  worstCase: TextUsage;
  /** the upstream call, made when read (after the hold) */
  events: () => AsyncIterable<ChatStreamEvent>;
  /** a completion's prompt that `echo: true` repeats in the text sent: a cut stream pays it as prompt, not output */
  echoed?: string;
}

/**
 * A streamed chat answer. The status line is sent with the first output (a text or tool-call delta, not the
 * upstream's role chunk or message_start), so a failure before any output is still a plain JSON error (and costs nothing).
 */
export async function streamChat(deps: GatewayDeps, meta: RequestMeta, res: Response, call: TextCall, format: StreamFormat): Promise<void> {
  const promptTokens = countPromptTokens(deps, call);
  const budget = completionBudget(call.model, promptTokens, call.maxTokens, call.maxTokensParam);
  const request = chatRequest(call, meta, budget);
  deps.providers.checkChat(request);
  await streamText(deps, meta, res, {
    model: call.model, promptTokens, worstCase: { promptTokens, completionTokens: budget }, events: () => deps.providers.chatStream(request),
  }, CHAT_CHOICE, format);
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
  }, COMPLETION_CHOICE, format);
}

/**
 * One streamed text answer, either shape. After output began, a cut stream (client gone or upstream broken) is
 * charged for the prompt (as the upstream reported it, else counted) and the text produced so far, counted with
 * the tokenizer.
 */
async function streamText(deps: GatewayDeps, meta: RequestMeta, res: Response, stream: TextStream, shape: ChoiceShape, format: StreamFormat): Promise<void> {
  const { model } = stream;
  // A client may go as long without reading as the upstream may go without sending.
  const stalledClientMs = deps.ctx.config.upstream.requestTimeoutMs;
  const hold = await meta.observation.step("hold", CreditHold.open(deps.ctx.ledger, meta.userId, textCost(model, stream.worstCase), {
    requestId: meta.requestId, model: model.id, endpoint: meta.endpoint, stream: true,
  }));
  const sse = new SseWriter(res, format, model.id);
  let started = false;
  let emitted = "";
  let final: { finishReason: string; usage: TextUsage; usageDetails?: Record<string, unknown> } | undefined;
  const start = () => {
    if (started) return;
    started = true;
    sse.open({});
    if (shape.opening) sse.chunk(shape.opening);
  };
  // the upstream attempt lasts until its last event was read (a slow client's pace included)
  const upstreamAt = meta.observation.upstreamStarted();
  try {
    for await (const event of stream.events()) {
      if (event.fields) sse.fields = event.fields;
      start();
      if (event.type === "delta") {
        emitted += event.content + deltaOutputText(event.delta);
        sse.chunk(shape.output(event));
        // Not on the usual path: only when the client reads slower than the upstream writes.
        if (sse.backedUp) await sse.drained(stalledClientMs);
      } else {
        final = { finishReason: event.finishReason, usage: event.usage, usageDetails: event.usageDetails };
      }
    }
    if (!final) throw new Error("stream ended without a final event");
    meta.observation.upstreamEnded(model.id, upstreamAt);
  } catch (err) {
    meta.observation.upstreamEnded(model.id, upstreamAt, err);
    if (!started) {
      await hold.release().catch(() => undefined);
      meta.observation.released();
      throw err;
    }
    // Output began: charge what was produced, then tell the client (if still there) that the stream broke. The prompt
    // is the upstream's own figure when it reported one before the cut (Anthropic does, first): that is what a
    // finished stream is charged too, and it counts what the gateway cannot (images).
    const reportedPrompt = err instanceof StreamInterruptedError ? err.reported.promptTokens : undefined;
    const produced = { promptTokens: reportedPrompt ?? stream.promptTokens, completionTokens: deps.providers.countTokens(withoutEcho(emitted, stream.echoed)) };
    const record = usageRecord(deps, meta, {
      model: model.id, type: "text", promptTokens: produced.promptTokens,
      completionTokens: produced.completionTokens, outputBytes: Buffer.byteLength(emitted), status: "partial",
    });
    const cost = await meta.observation.step("settle", hold.settle(textCost(model, produced), record));
    meta.observation.charged(record, cost);
    deps.ctx.logger.info({ requestId: meta.requestId, cost, aborted: meta.signal.aborted }, "stream cut after output began");
    // a client that asked for usage learns what the cut stream was charged, then why it ended
    if (format.includeUsage) sse.usage(produced, cost);
    sse.error(err);
    sse.end();
    return;
  }
  start();
  // The usage chunk reports the charge: settled last, for the real cost, which charges the quoted amount (the writes
  // below are synchronous, so the quote still holds at the settle) and records what the credits did not cover as
  // `uncharged`, as a non-streamed answer's settle does. Output bytes are those of the text produced.
  const used = textCost(model, final.usage);
  await hold.cover(used);
  const cost = hold.quote(used);
  try {
    sse.chunk(shape.finish(final.finishReason));
    if (format.includeUsage) sse.usage(final.usage, cost, final.usageDetails);
    sse.done();
  } finally {
    const record = usageRecord(deps, meta, {
      model: model.id, type: "text", promptTokens: final.usage.promptTokens,
      completionTokens: final.usage.completionTokens, outputBytes: Buffer.byteLength(emitted),
    });
    meta.observation.charged(record, await meta.observation.step("settle", hold.settle(used, record)));
  }
}
