// OpenAI's transcription answers (json, text, srt, vtt, verbose_json) from a normalized transcription.
import type { TimedWord, TranscriptionResult } from "@gw/providers";
import type { TranscriptionFormat } from "../schemas/openai-media";

export interface Cue {
  start: number;
  end: number;
  text: string;
}

/** A subtitle cue ends after a sentence, or once it spans this long or holds this many words. */
const CUE_MAX_SECONDS = 6;
const CUE_MAX_WORDS = 14;

/**
 * The transcript as timed cues: cut from the upstream's timed words when it gave them, else one cue for the whole
 * audio (its billed duration), so that every format has timings to show.
 */
export function transcriptCues(t: Pick<TranscriptionResult, "text" | "words">, durationSeconds: number): Cue[] {
  const words = t.words ?? [];
  if (words.length === 0) return t.text.trim() ? [{ start: 0, end: durationSeconds, text: t.text.trim() }] : [];
  const cues: Cue[] = [];
  let current: TimedWord[] = [];
  const flush = () => {
    const first = current[0];
    const last = current.at(-1);
    if (first && last) cues.push({ start: first.start, end: last.end, text: current.map((w) => w.word.trim()).join(" ") });
    current = [];
  };
  for (const word of words) {
    current.push(word);
    const first = current[0] ?? word;
    if (/[.!?]$/.test(word.word.trim()) || word.end - first.start >= CUE_MAX_SECONDS || current.length >= CUE_MAX_WORDS) flush();
  }
  flush();
  return cues;
}

/** 3725.5 s as `01:02:05,500` (SRT) or `01:02:05.500` (WebVTT). */
function timestamp(seconds: number, separator: "," | "."): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

export const srt = (cues: Cue[]): string =>
  cues.map((c, i) => `${i + 1}\n${timestamp(c.start, ",")} --> ${timestamp(c.end, ",")}\n${c.text}\n`).join("\n");

export const vtt = (cues: Cue[]): string =>
  `WEBVTT\n\n${cues.map((c) => `${timestamp(c.start, ".")} --> ${timestamp(c.end, ".")}\n${c.text}\n`).join("\n")}`;

export interface TranscriptAnswer {
  contentType: string;
  body: string | Record<string, unknown>;
}

/**
 * The answer in the asked format. `json` and `verbose_json` carry OpenAI's duration usage; `verbose_json` has
 * segments (the cues) and, when asked for, the timed words.
 */
export function transcriptAnswer(
  format: TranscriptionFormat,
  t: TranscriptionResult & { durationSeconds: number },
  opts: { language?: string; words: boolean },
): TranscriptAnswer {
  const usage = { type: "duration", seconds: t.durationSeconds };
  if (format === "text") return { contentType: "text/plain; charset=utf-8", body: t.text };
  if (format === "json") return { contentType: "application/json", body: { text: t.text, usage } };
  const cues = transcriptCues(t, t.durationSeconds);
  if (format === "srt") return { contentType: "text/plain; charset=utf-8", body: srt(cues) };
  if (format === "vtt") return { contentType: "text/vtt; charset=utf-8", body: vtt(cues) };
  return {
    contentType: "application/json",
    body: {
      task: "transcribe",
      language: t.language ?? opts.language ?? "",
      duration: t.durationSeconds,
      text: t.text,
      segments: cues.map((c, id) => ({
        id, seek: 0, start: c.start, end: c.end, text: c.text, tokens: [], temperature: 0, avg_logprob: 0, compression_ratio: 0, no_speech_prob: 0,
      })),
      ...(opts.words ? { words: (t.words ?? []).map((w) => ({ word: w.word, start: w.start, end: w.end })) } : {}),
      usage,
    },
  };
}
