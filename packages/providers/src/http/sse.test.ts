import { describe, expect, it } from "vitest";
import { parseSse } from "./sse";

async function* chunks(...parts: string[]) {
  for (const part of parts) yield new TextEncoder().encode(part);
}

describe("parseSse", () => {
  it("joins events split across chunks and keeps event names", async () => {
    const events = [];
    for await (const e of parseSse(chunks("event: a\nda", "ta: {\"x\":1}\n\n: comment\n\ndata: [DONE]\n\n"))) events.push(e);
    expect(events.map(({ event, data }) => ({ event, data }))).toEqual([{ event: "a", data: "{\"x\":1}" }, { event: undefined, data: "[DONE]" }]);
  });

  it("discards a final event whose blank line never came (it may be cut off)", async () => {
    const events = [];
    for await (const e of parseSse(chunks("data: one\n\ndata: {\"cut"))) events.push(e.data);
    expect(events).toEqual(["one"]);
  });
});
