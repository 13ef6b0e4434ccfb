// Minimal Server-Sent Events reader for fetch() bodies: EventSource can't POST or send a JSON body.

/** Yields the data payload of each event (multi-line data joined with "\n"); comments and other fields are skipped. */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) yield data.join("\n");
          data = [];
        } else if (line.startsWith("data:")) {
          data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
        }
      }
    }
    if (buffer.startsWith("data:")) data.push(buffer.slice(buffer.startsWith("data: ") ? 6 : 5));
    if (data.length > 0) yield data.join("\n");
  } finally {
    reader.releaseLock();
  }
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** dollars charged, as the gateway adds it to the final usage chunk (its headers leave before the cost is known) */
  cost?: number;
}

export type ChatStreamEvent =
  | { kind: "delta"; content: string }
  | { kind: "finish"; reason: string }
  | { kind: "usage"; usage: ChatUsage };

interface ChunkShape {
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: ChatUsage | null;
  error?: { message?: string; code?: string };
}

/** Turns OpenAI-format chat.completion.chunk payloads (CONTRACT 5) into events; stops at [DONE]. */
export async function* readChatStream(body: ReadableStream<Uint8Array>): AsyncGenerator<ChatStreamEvent> {
  for await (const payload of readSseData(body)) {
    if (payload.trim() === "[DONE]") return;
    let chunk: ChunkShape;
    try {
      chunk = JSON.parse(payload) as ChunkShape;
    } catch {
      continue;
    }
    if (chunk.error) throw new Error(chunk.error.message ?? "The stream failed.");
    for (const choice of chunk.choices ?? []) {
      if (choice.delta?.content) yield { kind: "delta", content: choice.delta.content };
      if (choice.finish_reason) yield { kind: "finish", reason: choice.finish_reason };
    }
    if (chunk.usage) yield { kind: "usage", usage: chunk.usage };
  }
}
