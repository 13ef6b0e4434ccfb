import { describe, expect, it } from "vitest";
import { buildSpeechToTextRequest, parseSpeechToTextResponse } from "./transform";

const model = { id: "speechvendor-stt", type: "speech", provider: "speech", protocol: "elevenlabs", pricing: {}, ownedBy: "x" } as const;

describe("elevenlabs speech-to-text transforms", () => {
  it("sends the language as language_code, only when given", () => {
    const audio = { data: Buffer.from("x"), filename: "a.wav", contentType: "audio/wav" };
    const signal = new AbortController().signal;
    const form = (language?: string) => buildSpeechToTextRequest({ baseUrl: "http://up", apiKey: "k" }, "scribe_v1", { model, audio, language, signal }).body as FormData;
    expect(form("de").get("language_code")).toBe("de");
    expect(form().get("language_code")).toBeNull();
  });

  it("keeps the spoken words with their times and the language; spacing and audio events are not words", () => {
    const parsed = parseSpeechToTextResponse({
      text: "Hi there (laughs)", language_code: "eng",
      words: [
        { text: "Hi", type: "word", start: 0, end: 0.4 }, { text: " ", type: "spacing", start: 0.4, end: 0.5 },
        { text: "there", type: "word", start: 0.5, end: 0.9 }, { text: "(laughs)", type: "audio_event", start: 1, end: 2 },
      ],
    });
    expect(parsed).toEqual({
      text: "Hi there (laughs)", durationSeconds: undefined, lastWordEndSeconds: 2, language: "eng",
      words: [{ word: "Hi", start: 0, end: 0.4 }, { word: "there", start: 0.5, end: 0.9 }],
    });
    expect(parseSpeechToTextResponse({ text: "x" })).toEqual({ text: "x", durationSeconds: undefined, lastWordEndSeconds: undefined });
  });
});
