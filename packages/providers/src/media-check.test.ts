import { describe, expect, it } from "vitest";
import { imageFormat, requireAudio, requireImage } from "./media-check";

const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p))));

describe("imageFormat", () => {
  it("recognises PNG, JPEG, GIF, WebP and AVIF by their magic numbers", () => {
    expect(imageFormat(bytes([0x89], "PNG\r\n\x1a\n", "IHDR"))).toBe("png");
    expect(imageFormat(bytes([0xff, 0xd8, 0xff, 0xe0], "JFIF"))).toBe("jpeg");
    expect(imageFormat(bytes("GIF89a", [1, 0]))).toBe("gif");
    expect(imageFormat(bytes("GIF87a", [1, 0]))).toBe("gif");
    expect(imageFormat(bytes("RIFF", [0, 0, 0, 0], "WEBPVP8 "))).toBe("webp");
    expect(imageFormat(bytes([0, 0, 0, 0x1c], "ftypavif", [0, 0, 0, 0], "avifmif1miaf"))).toBe("avif");
    // major brand mif1, avif only among the compatible brands
    expect(imageFormat(bytes([0, 0, 0, 0x18], "ftypmif1", [0, 0, 0, 0], "mif1avif"))).toBe("avif");
  });

  it("refuses what only looks similar: JSON, HTML, other RIFF and ISO-BMFF files, truncated headers, nothing", () => {
    for (const data of [
      bytes("{\"this is not json"), bytes("<html>expired</html>"), bytes(""), bytes([0x89], "PNG"), bytes([0xff, 0xd8]),
      bytes("RIFF", [0, 0, 0, 0], "WAVEfmt "), bytes([0, 0, 0, 0x18], "ftypisom", [0, 0, 0, 0], "isommp41"), bytes("GIF90a"),
    ]) {
      expect(imageFormat(data)).toBeUndefined();
      expect(() => requireImage(data)).toThrow(expect.objectContaining({ code: "upstream_error" }));
    }
  });
});

describe("requireAudio", () => {
  it("accepts headerless audio, refuses empty bodies and JSON, HTML or text", () => {
    expect(() => requireAudio("audio/pcm", Buffer.from([1, 2, 3]))).not.toThrow();
    for (const [type, data] of [["audio/mpeg", Buffer.alloc(0)], ["application/json", Buffer.from("{}")], ["text/html", Buffer.from("<p>")]] as const) {
      expect(() => requireAudio(type, data)).toThrow(expect.objectContaining({ code: "upstream_error" }));
    }
  });
});
