// How long an uploaded audio file plays, for the worst case a speech-to-text or speech-to-speech request holds
// (CONTRACT 6). Read from the container's headers by music-metadata (WAV, MP3, Ogg/Opus, FLAC, M4A, WebM …),
// never decoded. Loaded on the first speech upload: most gateway processes serve text and never need it.
import type { IFormat, parseFromTokenizer as ParseFromTokenizer } from "music-metadata";
import type { fromBuffer as FromBuffer, ITokenizer } from "strtok3";
import { mpegSecondsAtMost } from "./mpeg-frames";
import { AUDIO_BYTES_PER_SECOND_FLOOR } from "./pricing";

let parser: Promise<{ parseFromTokenizer: typeof ParseFromTokenizer; fromBuffer: typeof FromBuffer }> | undefined;

/**
 * A header read takes milliseconds; bytes that look like MPEG frame syncs (runs of 0xFF) make music-metadata try
 * every position, about 10 seconds per megabyte, in promises that never let the event loop run: one upload froze
 * every request of the process. So the reads yield to other work every few milliseconds and give up once the read
 * itself has run for the budget (the length then counts as unreadable). Time spent serving others while yielded is
 * not counted, so a busy server reads a valid header as it would an idle one.
 */
export const HEADER_READ_BUDGET_MS = 250;
const YIELD_EVERY_MS = 10;

interface ReadBudget {
  leftMs: number;
}

function budgeted(tokenizer: ITokenizer, budget: ReadBudget): ITokenizer {
  const peek = tokenizer.peekBuffer.bind(tokenizer);
  let running = performance.now();
  // every read (read, peek, tokens, numbers) goes through peekBuffer
  tokenizer.peekBuffer = async (buffer, options) => {
    const now = performance.now();
    if (now - running > YIELD_EVERY_MS) {
      budget.leftMs -= now - running;
      if (budget.leftMs <= 0) throw new Error("audio header read over budget");
      await new Promise((resolve) => setImmediate(resolve));
      running = performance.now();
    }
    return peek(buffer, options);
  };
  return tokenizer;
}

/** WAV codecs that store every sample in its bits, so the bytes bound the length whatever a `fact` chunk declares. */
const UNCOMPRESSED_WAV = new Set(["PCM", "IEEE_FLOAT", "ALAW", "MULAW"]);
/** The RIFF, fmt and data chunk headers: the least a WAV file carries besides its samples. */
const WAV_HEADER_BYTES = 44;

/**
 * The most a file of these bytes can play, whatever its header declares (a forged or stale frame or sample count):
 * MPEG audio by walking its frames, uncompressed WAV by its sample bytes at the sample size. Other containers (FLAC,
 * M4A, Ogg, WebM) are taken as declared: no bound follows from their bytes without decoding them.
 */
function secondsAtMost(format: IFormat, data: Buffer): number {
  if (format.container === "MPEG") return mpegSecondsAtMost(data);
  const { codec, sampleRate, numberOfChannels, bitsPerSample } = format;
  if (format.container === "WAVE" && codec !== undefined && UNCOMPRESSED_WAV.has(codec) && sampleRate && numberOfChannels && bitsPerSample) {
    return (Math.max(0, data.length - WAV_HEADER_BYTES) * 8) / (sampleRate * numberOfChannels * bitsPerSample);
  }
  return Infinity;
}

async function parsedSeconds(data: Buffer, mimeType: string | undefined, budget: ReadBudget): Promise<number | undefined> {
  parser ??= Promise.all([import("music-metadata"), import("strtok3")]).then(([m, s]) => ({ parseFromTokenizer: m.parseFromTokenizer, fromBuffer: s.fromBuffer }));
  try {
    const { parseFromTokenizer, fromBuffer } = await parser;
    const tokenizer = budgeted(fromBuffer(data, { fileInfo: { mimeType, size: data.length } }), budget);
    const { format } = await parseFromTokenizer(tokenizer, { skipCovers: true });
    const seconds = format.duration === undefined ? undefined : Math.min(format.duration, secondsAtMost(format, data));
    return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Seconds of audio the container declares, at most what its bytes can play (secondsAtMost), or undefined when it
 * cannot tell (unknown format, no header, garbage).
 * The file's own bytes pick the parser: a type the client declared is only a fallback, since music-metadata
 * follows a given type blindly, and a mislabelled upload (a WAV sent as audio/mpeg) would read as unknown length.
 */
export async function declaredAudioSeconds(data: Buffer, contentType?: string): Promise<number | undefined> {
  const budget = { leftMs: HEADER_READ_BUDGET_MS };
  return (await parsedSeconds(data, undefined, budget)) ?? (contentType ? parsedSeconds(data, contentType, budget) : undefined);
}

/**
 * Seconds of audio an upstream produced in `outputFormat` (ElevenLabs' codes): headerless PCM (16-bit mono),
 * u-law and A-law by their size at the format's sample rate, anything else from its container.
 */
export async function producedAudioSeconds(data: Buffer, contentType: string, outputFormat: string | undefined): Promise<number | undefined> {
  const headerless = /^(pcm|ulaw|alaw)_(\d+)/.exec(outputFormat ?? "");
  if (headerless) {
    const bytesPerSecond = Number(headerless[2]) * (headerless[1] === "pcm" ? 2 : 1);
    return bytesPerSecond > 0 && data.length > 0 ? data.length / bytesPerSecond : undefined;
  }
  return declaredAudioSeconds(data, contentType);
}

/**
 * The seconds a speech upload is held for: what its container declares (plus one second for rounding between the
 * container and the upstream), else an estimate from its size at 2,000 bytes per second. Either way the hold is
 * settled to the duration the upstream reports.
 */
export function heldAudioSeconds(bytes: number, declared: number | undefined): number {
  if (declared !== undefined) return Math.ceil(declared) + 1;
  return Math.max(1, Math.ceil(bytes / AUDIO_BYTES_PER_SECOND_FLOOR));
}
