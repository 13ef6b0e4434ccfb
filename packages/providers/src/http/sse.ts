// Turns a byte stream into Server-Sent Events with eventsource-parser (spec-complete line handling).
import { createParser, type EventSourceMessage } from "eventsource-parser";

export type SseEvent = EventSourceMessage;

export async function* parseSse(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const pending: SseEvent[] = [];
  const parser = createParser({ onEvent: (event) => { pending.push(event); } });
  const decoder = new TextDecoder();
  for await (const chunk of chunks) {
    parser.feed(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    for (let i = 0; i < pending.length; i++) yield pending[i] as SseEvent;
    pending.length = 0;
  }
  // As the SSE spec says, an event cut off before its blank line is discarded: it may be incomplete.
}
