import { describe, expect, it } from "vitest";
import { srt, transcriptAnswer, transcriptCues, vtt } from "./transcript-formats";

const word = (w: string, start: number, end: number) => ({ word: w, start, end });

describe("transcript formats", () => {
  it("cuts cues after a sentence, at 6 seconds and at 14 words", () => {
    const words = [word("Hello", 0, 0.5), word("there.", 0.5, 1), word("How", 1.2, 1.5), word("are", 1.5, 4), word("you", 4, 7.5), word("today?", 7.5, 8)];
    expect(transcriptCues({ text: "", words }, 8)).toEqual([
      { start: 0, end: 1, text: "Hello there." }, { start: 1.2, end: 7.5, text: "How are you" }, { start: 7.5, end: 8, text: "today?" },
    ]);
    const many = Array.from({ length: 15 }, (_, i) => word(`w${i}`, i * 0.1, i * 0.1 + 0.1));
    expect(transcriptCues({ text: "", words: many }, 2).map((c) => c.text.split(" ").length)).toEqual([14, 1]);
  });

  it("without timed words, one cue spans the billed duration; an empty transcript has none", () => {
    expect(transcriptCues({ text: " all of it " }, 3.5)).toEqual([{ start: 0, end: 3.5, text: "all of it" }]);
    expect(transcriptCues({ text: "" }, 3.5)).toEqual([]);
    expect(srt([])).toBe("");
    expect(vtt([])).toBe("WEBVTT\n\n");
  });

  it("writes SRT and WebVTT timestamps, hours included", () => {
    const cues = [{ start: 3725.5, end: 3727.0004, text: "late" }];
    expect(srt(cues)).toBe("1\n01:02:05,500 --> 01:02:07,000\nlate\n");
    expect(vtt(cues)).toBe("WEBVTT\n\n01:02:05.500 --> 01:02:07.000\nlate\n");
  });

  it("verbose_json has segments, the words only when asked, and the duration usage", () => {
    const t = { text: "a b", words: [word("a", 0, 1), word("b", 1, 2)], durationSeconds: 2, language: "en" };
    const plain = transcriptAnswer("verbose_json", t, { words: false }).body as Record<string, unknown>;
    expect(plain).toMatchObject({ task: "transcribe", language: "en", duration: 2, text: "a b", usage: { type: "duration", seconds: 2 } });
    expect(plain).not.toHaveProperty("words");
    expect((transcriptAnswer("verbose_json", t, { words: true }).body as { words: unknown[] }).words).toHaveLength(2);
    expect(transcriptAnswer("text", t, { words: false })).toEqual({ contentType: "text/plain; charset=utf-8", body: "a b" });
  });
});
