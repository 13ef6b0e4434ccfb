import { describe, expect, it } from "vitest";
import { lowBitrateMp3, MP3_128K_FRAME_SECONDS, pcmWav, taggedMp3 } from "@gw/test-support";
import { declaredAudioSeconds } from "./audio-duration";
import { mpegSecondsAtMost } from "./mpeg-frames";

describe("declaredAudioSeconds: at most what the bytes can play", () => {
  it("an MP3 whose Xing or Info tag claims more frames than it holds reads as the frames it holds", async () => {
    // 100 frames (2.6 s) after the tag frame, 42 KB, the tag claiming 10,000 frames (261 s)
    for (const tag of ["Xing", "Info"] as const) {
      expect(await declaredAudioSeconds(taggedMp3(100, 10_000, tag), "audio/mpeg")).toBeCloseTo(101 * MP3_128K_FRAME_SECONDS, 9);
    }
  });

  it("an honest tag is read as it declares; a plain CBR stream by its size", async () => {
    expect(await declaredAudioSeconds(taggedMp3(100, 100))).toBeCloseTo(100 * MP3_128K_FRAME_SECONDS, 9);
    expect(await declaredAudioSeconds(lowBitrateMp3(10))).toBeCloseTo(10.008, 9);
  });

  it("a PCM WAV whose fact chunk declares more samples than it carries reads as its sample bytes", async () => {
    expect(await declaredAudioSeconds(pcmWav(2.5, 16_000_000))).toBe(2.5 + 12 / 32_000); // the fact chunk's 12 bytes are counted
    expect(await declaredAudioSeconds(pcmWav(2.5, 8_000))).toBe(0.5); // one declaring less is taken at its word
    expect(await declaredAudioSeconds(pcmWav(5))).toBe(5);
  });
});

describe("mpegSecondsAtMost", () => {
  it("walks the frames after the ID3v2 tag; bytes it cannot walk count at 8 kbit/s", () => {
    const frames = taggedMp3(9, 9);
    const id3 = Buffer.concat([Buffer.from("ID3\x04\x00\x00\x00\x00\x01\x00", "latin1"), Buffer.alloc(128)]);
    expect(mpegSecondsAtMost(Buffer.concat([id3, frames]))).toBeCloseTo(10 * MP3_128K_FRAME_SECONDS, 9);
    expect(mpegSecondsAtMost(Buffer.concat([frames, Buffer.alloc(500, 0xff)]))).toBeCloseTo(10 * MP3_128K_FRAME_SECONDS + 0.5, 9);
    expect(mpegSecondsAtMost(Buffer.concat([frames.subarray(0, 417 * 3 + 200)]))).toBeCloseTo(3 * MP3_128K_FRAME_SECONDS + 0.2, 9);
    expect(mpegSecondsAtMost(Buffer.alloc(2_000, 0xff))).toBe(2);
  });
});
