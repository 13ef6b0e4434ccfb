import { describe, expect, it } from "vitest";
import { readChatStream, readSseData } from "./sse";

function streamOf(...parts: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const p of parts) controller.enqueue(enc.encode(p));
      controller.close();
    },
  });
}

async function collect<T>(gen: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of gen) out.push(item);
  return out;
}

describe("readSseData", () => {
  it("reassembles events split across chunks and line-ending styles", async () => {
    const events = await collect(readSseData(streamOf("data: one\n", "\ndata: t", "wo\r\n\r\n: comment\n\ndata:a\ndata:b\n\n")));
    expect(events).toEqual(["one", "two", "a\nb"]);
  });

  it("yields a final event without a trailing blank line", async () => {
    expect(await collect(readSseData(streamOf("data: last")))).toEqual(["last"]);
  });
});

describe("readChatStream", () => {
  const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;

  it("turns chat.completion.chunk payloads into deltas, the finish reason and usage, stopping at [DONE]", async () => {
    const events = await collect(readChatStream(streamOf(
      chunk({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }),
      chunk({ choices: [{ index: 0, delta: { content: "Hel" } }] }),
      chunk({ choices: [{ index: 0, delta: { content: "lo" }, finish_reason: null }] }),
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
      chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }),
      "data: [DONE]\n\n",
      chunk({ choices: [{ index: 0, delta: { content: "ignored" } }] }),
    )));
    expect(events).toEqual([
      { kind: "delta", content: "Hel" },
      { kind: "delta", content: "lo" },
      { kind: "finish", reason: "stop" },
      { kind: "usage", usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
    ]);
  });

  it("surfaces an error event sent mid-stream", async () => {
    await expect(collect(readChatStream(streamOf(chunk({ error: { message: "upstream failed", code: "upstream_error" } }))))).rejects.toThrow("upstream failed");
  });
});
