import type { Response } from "express";
import { StreamInterruptedError, toolCallText, type TextUsage } from "@gw/providers";
import { microsToDollars, nestedErrorBody, toAppError } from "@gw/shared";
import type { GatewayDeps } from "../deps";
import { CreditHold } from "../money/hold";
import { textCost } from "../money/pricing";
import { chatRequest, completionBudget, countPromptTokens, type TextCall } from "./text";
import { usageRecord, type RequestMeta } from "./request-meta";

export interface StreamFormat {
  /** `chat.completion.chunk` on /v1, `task.completion.chunk` on the task endpoint */
  object: string;
  id: string;
  created: number;
  includeUsage: boolean;
}

/** The event that closes an OpenAI-style stream, as written. */
export const DONE_EVENT = "data: [DONE]\n\n";

/** The status and headers of an event stream (a replayed one too). */
export function setEventStreamHeaders(res: Response, headers: Record<string, string>): void {
  res.status(200);
  res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
  res.setHeader("Cache-Control", "no-cache, no-transform");
  res.setHeader("Connection", "keep-alive");
  res.setHeader("X-Accel-Buffering", "no");
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
}

/** Writes OpenAI-style server-sent events. */
class SseWriter {

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

  chunk(delta: Record<string, unknown>, finishReason: string | null, logprobs: unknown = null): void {
    this.write(JSON.stringify({
      id: this.format.id, object: this.format.object, created: this.format.created, model: this.model,
      choices: [{ index: 0, delta, logprobs, finish_reason: finishReason }],
      ...(this.format.includeUsage ? { usage: null } : {}),
    }));
  }

  usage(usage: TextUsage, costMicros: number, details?: Record<string, unknown>): void {
    this.write(JSON.stringify({
      id: this.format.id, object: this.format.object, created: this.format.created, model: this.model, choices: [],
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

/**
 * A streamed chat answer. The status line is sent with the first output (a text or tool-call delta, not the
 * upstream's role chunk or message_start), so a failure before any output is still a plain JSON error (and costs nothing). After output began, a cut stream (client gone or
 * upstream broken) is charged for the prompt (as the upstream reported it, else counted) and the text produced so
 * far, counted with the tokenizer.
 */
export async function streamChat(deps: GatewayDeps, meta: RequestMeta, res: Response, call: TextCall, format: StreamFormat): Promise<void> {
  // A client may go as long without reading as the upstream may go without sending.
  const stalledClientMs = deps.ctx.config.upstream.requestTimeoutMs;
  const promptTokens = countPromptTokens(deps, call);
  const budget = completionBudget(call.model, promptTokens, call.maxTokens, call.maxTokensParam);
  const request = chatRequest(call, meta, budget);
  deps.providers.checkChat(request);
  const hold = await CreditHold.open(deps.ctx.ledger, meta.userId, textCost(call.model, { promptTokens, completionTokens: budget }), {
    requestId: meta.requestId, model: call.model.id, endpoint: meta.endpoint, stream: true,
  });
  const sse = new SseWriter(res, format, call.model.id);
  let started = false;
  let emitted = "";
  let final: { finishReason: string; usage: TextUsage; usageDetails?: Record<string, unknown> } | undefined;
  const start = () => {
    if (started) return;
    started = true;
    sse.open({});
    sse.chunk({ role: "assistant", content: "" }, null);
  };
  try {
    for await (const event of deps.providers.chatStream(request)) {
      start();
      if (event.type === "delta") {
        if (event.delta !== undefined || event.logprobs !== undefined) {
          // tool-call fragments, refusals, logprobs: passed on as the upstream sent them
          emitted += event.content + toolCallText(event.delta);
          sse.chunk(event.delta ?? { content: event.content }, null, event.logprobs ?? null);
        } else if (event.content.length > 0) {
          emitted += event.content;
          sse.chunk({ content: event.content }, null);
        }
        // Not on the usual path: only when the client reads slower than the upstream writes.
        if (sse.backedUp) await sse.drained(stalledClientMs);
      } else {
        final = { finishReason: event.finishReason, usage: event.usage, usageDetails: event.usageDetails };
      }
    }
    if (!final) throw new Error("stream ended without a final event");
  } catch (err) {
    if (!started) {
      await hold.release().catch(() => undefined);
      throw err;
    }
    // Output began: charge what was produced, then tell the client (if still there) that the stream broke. The prompt
    // is the upstream's own figure when it reported one before the cut (Anthropic does, first): that is what a
    // finished stream is charged too, and it counts what the gateway cannot (images).
    const reportedPrompt = err instanceof StreamInterruptedError ? err.reported.promptTokens : undefined;
    const produced = { promptTokens: reportedPrompt ?? promptTokens, completionTokens: deps.providers.countTokens(emitted) };
    const cost = await hold.settle(textCost(call.model, produced), usageRecord(deps, meta, {
      model: call.model.id, type: "text", promptTokens: produced.promptTokens,
      completionTokens: produced.completionTokens, outputBytes: Buffer.byteLength(emitted), status: "partial",
    }));
    deps.ctx.logger.info({ requestId: meta.requestId, cost, aborted: meta.signal.aborted }, "stream cut after output began");
    sse.error(err);
    sse.end();
    return;
  }
  start();
  // The usage chunk reports the charge: settled last, for the quoted cost (the writes below are synchronous, so the
  // quote still holds at the settle). Output bytes are those of the text produced, as for a non-streamed answer.
  const used = textCost(call.model, final.usage);
  await hold.cover(used);
  const cost = hold.quote(used);
  try {
    sse.chunk({}, final.finishReason);
    if (format.includeUsage) sse.usage(final.usage, cost, final.usageDetails);
    sse.done();
  } finally {
    await hold.settle(cost, usageRecord(deps, meta, {
      model: call.model.id, type: "text", promptTokens: final.usage.promptTokens,
      completionTokens: final.usage.completionTokens, outputBytes: Buffer.byteLength(emitted),
    }));
  }
}
