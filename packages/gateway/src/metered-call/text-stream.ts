import type { ModelDefinition } from "@gw/config";
import { StreamInterruptedError, deltaOutputText, withoutEcho, type ChatStreamEncoder, type ChatStreamEvent, type Served, type TextUsage } from "@gw/providers";
import { toAppError } from "@gw/shared";
import { dearestOf, textCost } from "../pricing/pricing";
import type { Metering, MeteredRequest, UsageRecord } from "./metered-call";

/**
 * Where a stream's events go (an HTTP response as server-sent events): opened with the first event, paced by how fast
 * its reader reads.
 */
export interface EventSink {
  /** the status line and headers, naming the model that serves */
  open(model: string): void;
  write(events: string): void;
  /** the events that close a complete answer, then the end */
  close(events: string): void;
  end(): void;
  /** the reader is not reading as fast as the upstream writes */
  readonly backedUp: boolean;
  /** waits until the reader has read what waits for it; one that reads nothing for `timeoutMs` is dropped */
  drained(timeoutMs: number): Promise<void>;
}

/** What a streamed text call records of its usage (the usage record's text fields). */
export interface TextCallUsage {
  model: string;
  deployment?: string;
  type: "text";
  promptTokens: number;
  completionTokens: number;
  outputBytes: number;
  status?: "partial";
}

/** What one streamed text call is: its model, its prompt as counted, the worst case held, and its upstream events. */
export interface TextStream {
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

type ChatDoneEvent = Extract<ChatStreamEvent, { type: "done" }>;

/**
 * One streamed text answer, in the encoder's events: the metered call's hold, upstream, settle (or release), as a
 * plain call's. The status line is sent with the first output, so a failure before any output is still a plain
 * error (and costs nothing). After output began, a cut stream (client gone or upstream broken) is charged for the
 * prompt (as the upstream reported it, else counted) and the text produced so far, counted with the tokenizer. The
 * hold covers the dearest model that may serve; the charge is at the price of the one that did (the first event
 * names it, before the status line is sent).
 */
export async function meteredTextStream<Req extends MeteredRequest<R>, R extends UsageRecord>(
  metering: Metering<Req, TextCallUsage, R>,
  request: Req,
  sink: EventSink,
  stream: TextStream,
  encoder: ChatStreamEncoder,
): Promise<void> {
  const { providers, logger } = metering.deps;
  const stalledClientMs = metering.deps.stalledClientMs();
  const worstCase = dearestOf(providers.modelChain(stream.model), (m) => textCost(m, stream.worstCase));
  const metered = await metering.open(request, worstCase, {
    requestId: request.requestId, model: stream.model.id, endpoint: request.endpoint, stream: true,
  });
  const observation = request.observation;
  let model = stream.model;
  let deployment: string | undefined;
  let started = false;
  let emitted = "";
  let final: ChatDoneEvent | undefined;
  const start = (first: ChatStreamEvent) => {
    if (started) return;
    started = true;
    const served: Served | undefined = first.served;
    if (served) {
      model = served.model;
      deployment = served.deploymentId;
    }
    sink.open(model.id);
    sink.write(encoder.open(first));
  };
  // the upstream attempt lasts until its last event was read (a slow client's pace included)
  const upstreamAt = observation.upstreamStarted();
  try {
    for await (const event of stream.events()) {
      start(event);
      if (event.type === "delta") {
        emitted += event.content + deltaOutputText(event.delta);
        sink.write(encoder.delta(event));
        // Not on the usual path: only when the client reads slower than the upstream writes.
        if (sink.backedUp) await sink.drained(stalledClientMs);
      } else {
        final = event;
      }
    }
    if (!final) throw new Error("stream ended without a final event");
    observation.upstreamEnded(model.id, upstreamAt, undefined, deployment);
  } catch (err) {
    observation.upstreamEnded(model.id, upstreamAt, err, deployment);
    if (!started) {
      await metered.release();
      throw err;
    }
    // Output began: charge what was produced, then tell the client (if still there) that the stream broke. The prompt
    // is the upstream's own figure when it reported one before the cut (Anthropic does, first): that is what a
    // finished stream is charged too, and it counts what the gateway cannot (images).
    const reportedPrompt = err instanceof StreamInterruptedError ? err.reported.promptTokens : undefined;
    const produced = { promptTokens: reportedPrompt ?? stream.promptTokens, completionTokens: providers.countTokens(withoutEcho(emitted, stream.echoed)) };
    const cost = await metered.settle(textCost(model, produced), {
      model: model.id, deployment, type: "text", promptTokens: produced.promptTokens,
      completionTokens: produced.completionTokens, outputBytes: Buffer.byteLength(emitted), status: "partial",
    });
    logger.info({ requestId: request.requestId, cost, aborted: request.signal.aborted }, "stream cut after output began");
    sink.write(encoder.cut(produced, cost, toAppError(err)));
    sink.end();
    return;
  }
  start(final);
  // what the answer leaves behind (a stored response) is saved before its end is written, so a client that reads the
  // end can refer to it at once
  await encoder.complete?.(final);
  // The usage chunk reports the charge: settled last, for the real cost, which charges the quoted amount (the writes
  // below are synchronous, so the quote still holds at the settle) and records what the credits did not cover as
  // `uncharged`, as a non-streamed answer's settle does. Output bytes are those of the text produced.
  const used = textCost(model, final.usage);
  await metered.cover(used);
  const cost = metered.quote(used);
  try {
    sink.close(encoder.finish(final, cost));
  } finally {
    await metered.settle(used, {
      model: model.id, deployment, type: "text", promptTokens: final.usage.promptTokens,
      completionTokens: final.usage.completionTokens, outputBytes: Buffer.byteLength(emitted),
    });
  }
}
