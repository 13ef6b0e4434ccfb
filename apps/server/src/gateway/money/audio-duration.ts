// How long an uploaded audio file plays, for the worst case a speech-to-text or speech-to-speech request holds
// (CONTRACT 6). Read from the container's headers by music-metadata (WAV, MP3, Ogg/Opus, FLAC, M4A, WebM …),
// never decoded. Loaded on the first speech upload: most gateway processes serve text and never need it.
import type { parseBuffer as ParseBuffer } from "music-metadata";
import { AUDIO_BYTES_PER_SECOND_FLOOR } from "./pricing";

let parser: Promise<typeof ParseBuffer> | undefined;

async function parsedSeconds(data: Buffer, mimeType: string | undefined): Promise<number | undefined> {
  parser ??= import("music-metadata").then((m) => m.parseBuffer);
  try {
    const parseBuffer = await parser;
    const { format } = await parseBuffer(data, { mimeType, size: data.length }, { skipCovers: true });
    const seconds = format.duration;
    return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Seconds of audio the container declares, or undefined when it cannot tell (unknown format, no header, garbage).
 * The file's own bytes pick the parser: a type the client declared is only a fallback, since music-metadata
 * follows a given type blindly, and a mislabelled upload (a WAV sent as audio/mpeg) would read as unknown length.
 */
export async function declaredAudioSeconds(data: Buffer, contentType?: string): Promise<number | undefined> {
  return (await parsedSeconds(data, undefined)) ?? (contentType ? parsedSeconds(data, contentType) : undefined);
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
