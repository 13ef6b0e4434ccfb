// The most audio an MPEG audio stream (MP3, MP2) can play: its frames walked header to header, whatever a Xing/Info
// or VBRI header declares (a forged frame count made a 42 KB file of 2.6 s read as 261 s). Only headers are read.

// kbit/s by bitrate index 1..14: MPEG-1 layers I, II, III, then MPEG-2 and 2.5 layers I, II, III
const BITRATES_KBPS = [
  [
    [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  ],
  [
    [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  ],
];
const MPEG1_SAMPLE_RATES = [44_100, 48_000, 32_000];

/**
 * Bytes that are not frames (a trailing tag, junk a walk cannot cross) count as audio at 8 kbit/s, the lowest
 * bitrate an MPEG audio frame has, so frames a decoder might find among them are never left out of the bound.
 */
const UNWALKED_BYTES_PER_SECOND = 1_000;

interface Frame {
  bytes: number;
  seconds: number;
}

function frameAt(data: Buffer, at: number): Frame | undefined {
  if (at + 4 > data.length) return undefined;
  const header = data.readUInt32BE(at);
  if (header >>> 21 !== 0x7ff) return undefined;
  const version = (header >>> 19) & 3; // 0 MPEG-2.5, 1 reserved, 2 MPEG-2, 3 MPEG-1
  const layer = 4 - ((header >>> 17) & 3); // 4: reserved
  const bitrateIndex = (header >>> 12) & 15; // 0: free format (no frame length), 15: invalid
  const rateIndex = (header >>> 10) & 3;
  const kbps = BITRATES_KBPS[version === 3 ? 0 : 1]?.[layer - 1]?.[bitrateIndex - 1];
  const mpeg1Rate = MPEG1_SAMPLE_RATES[rateIndex];
  if (version === 1 || kbps === undefined || mpeg1Rate === undefined) return undefined;
  const sampleRate = mpeg1Rate / (version === 3 ? 1 : version === 2 ? 2 : 4);
  const samples = layer === 1 ? 384 : layer === 3 && version !== 3 ? 576 : 1152;
  const padding = (header >>> 9) & 1;
  const bytes = layer === 1
    ? (Math.floor((12_000 * kbps) / sampleRate) + padding) * 4
    : Math.floor((samples * 125 * kbps) / sampleRate) + padding;
  return { bytes, seconds: samples / sampleRate };
}

/** Where the audio starts: after the ID3v2 tags at the file's start (10-byte header, syncsafe size, optional footer). */
function id3v2End(data: Buffer): number {
  let at = 0;
  while (at + 10 <= data.length && data.toString("latin1", at, at + 3) === "ID3") {
    const size = ((data.readUInt8(at + 6) & 0x7f) << 21) | ((data.readUInt8(at + 7) & 0x7f) << 14) | ((data.readUInt8(at + 8) & 0x7f) << 7) | (data.readUInt8(at + 9) & 0x7f);
    at += 10 + size + ((data.readUInt8(at + 5) & 0x10) !== 0 ? 10 : 0);
  }
  return at;
}

/**
 * Seconds the MPEG audio in `data` plays at most: the frames from the first one after the ID3v2 tags to the first
 * byte that does not start a whole frame, plus the bytes after that at 8 kbit/s. Exact for a clean file; a frame a
 * Xing/Info/VBRI header claims but the file does not hold adds nothing.
 */
export function mpegSecondsAtMost(data: Buffer): number {
  let at = id3v2End(data);
  let seconds = 0;
  for (let frame = frameAt(data, at); frame && at + frame.bytes <= data.length; frame = frameAt(data, at)) {
    seconds += frame.seconds;
    at += frame.bytes;
  }
  return seconds + Math.max(0, data.length - at) / UNWALKED_BYTES_PER_SECOND;
}
