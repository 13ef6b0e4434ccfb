// A 200 whose body is not the media asked for (an error page, JSON, a truncated file) is a broken upstream:
// 502 without charging, never passed on to the caller as if it were the result.
import { wrongShape } from "./upstream-errors";

export type ImageFormat = "png" | "jpeg" | "gif" | "webp" | "avif";

const ascii = (data: Buffer, start: number, end: number): string => data.subarray(start, end).toString("latin1");

/** AVIF is an ISO-BMFF file: an `ftyp` box whose major or compatible brands name avif (still) or avis (sequence). */
function isAvif(data: Buffer): boolean {
  if (data.length < 16 || ascii(data, 4, 8) !== "ftyp") return false;
  const boxEnd = Math.min(data.readUInt32BE(0), data.length);
  const brands = [ascii(data, 8, 12)];
  for (let at = 16; at + 4 <= boxEnd; at += 4) brands.push(ascii(data, at, at + 4));
  return brands.some((brand) => brand === "avif" || brand === "avis");
}

/** The image format by its magic number (the content type is not trusted: CDNs label images loosely). */
export function imageFormat(data: Buffer): ImageFormat | undefined {
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "png";
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return "jpeg";
  if (data.length >= 6 && /^GIF8[79]a$/.test(ascii(data, 0, 6))) return "gif";
  if (data.length >= 12 && ascii(data, 0, 4) === "RIFF" && ascii(data, 8, 12) === "WEBP") return "webp";
  if (isAvif(data)) return "avif";
  return undefined;
}

export function requireImage(data: Buffer): ImageFormat {
  const format = imageFormat(data);
  if (!format) throw wrongShape("image");
  return format;
}

/**
 * Audio may be headerless (ElevenLabs' pcm_* and ulaw_8000), so no magic number can vouch for it: an empty body or
 * one labelled as JSON, HTML or text is refused.
 */
export function requireAudio(contentType: string, data: Buffer): void {
  if (data.length === 0 || /json|html|text\//i.test(contentType)) throw wrongShape("audio");
}
