// Audio files built byte by byte, for tests of what an upload's header declares and what its bytes hold.

/** MPEG-2.5 Layer III frames at 8 kbit/s, 8 kHz mono (silent): 72 bytes per 72 ms, 1,000 bytes per second. */
export function lowBitrateMp3(seconds: number): Buffer {
  const frame = Buffer.from([0xff, 0xe3, 0x18, 0xc0, ...Array<number>(68).fill(0)]);
  return Buffer.concat(Array<Buffer>(Math.ceil(seconds / 0.072)).fill(frame));
}

/** MPEG-1 Layer III frame header: 128 kbit/s, 44.1 kHz, mono, so 417 bytes per 1,152 samples (26.1 ms). */
const MP3_128K_HEADER = 0xfffb90c0;
const MP3_128K_FRAME_BYTES = 417;
export const MP3_128K_FRAME_SECONDS = 1152 / 44_100;

/** `frames` frames of 128 kbit/s MP3 after a first frame whose Xing (VBR) or Info (LAME's CBR) tag declares `declaredFrames`. */
export function taggedMp3(frames: number, declaredFrames: number, tag: "Xing" | "Info" = "Xing"): Buffer {
  const frame = () => {
    const f = Buffer.alloc(MP3_128K_FRAME_BYTES);
    f.writeUInt32BE(MP3_128K_HEADER, 0);
    return f;
  };
  const first = frame();
  first.write(tag, 4 + 17, "latin1"); // after a mono MPEG-1 frame's 17 bytes of side information
  first.writeUInt32BE(3, 4 + 17 + 4); // flags: frame and byte counts present
  first.writeUInt32BE(declaredFrames, 4 + 17 + 8);
  first.writeUInt32BE(declaredFrames * MP3_128K_FRAME_BYTES, 4 + 17 + 12);
  return Buffer.concat([first, ...Array.from({ length: frames }, frame)]);
}

/**
 * A silent 16-bit mono PCM WAV of `seconds` at 16 kHz (32,000 bytes per second), its header declaring its length;
 * with `factSamples`, a `fact` chunk declaring that many samples instead.
 */
export function pcmWav(seconds: number, factSamples?: number): Buffer {
  const data = Buffer.alloc(Math.round(seconds * 32_000));
  const fmt = Buffer.alloc(24);
  fmt.write("fmt ", 0, "latin1");
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8); // PCM
  fmt.writeUInt16LE(1, 10); // mono
  fmt.writeUInt32LE(16_000, 12);
  fmt.writeUInt32LE(32_000, 16);
  fmt.writeUInt16LE(2, 20);
  fmt.writeUInt16LE(16, 22);
  const fact = Buffer.alloc(factSamples === undefined ? 0 : 12);
  if (factSamples !== undefined) {
    fact.write("fact", 0, "latin1");
    fact.writeUInt32LE(4, 4);
    fact.writeUInt32LE(factSamples, 8);
  }
  const dataHeader = Buffer.alloc(8);
  dataHeader.write("data", 0, "latin1");
  dataHeader.writeUInt32LE(data.length, 4);
  const riff = Buffer.alloc(12);
  riff.write("RIFF", 0, "latin1");
  riff.writeUInt32LE(4 + fmt.length + fact.length + dataHeader.length + data.length, 4);
  riff.write("WAVE", 8, "latin1");
  return Buffer.concat([riff, fmt, fact, dataHeader, data]);
}
