import { describe, expect, it } from "vitest";
import { countTokens as countExactly } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens } from "./tokens";

describe("countTokens", () => {
  it("counts ordinary text exactly as the tokenizer does", () => {
    const texts = [
      "Hello, world!  How are you?\n\nFine.",
      "function double(x) {\n  return x * 2;\n}\n".repeat(200),
      "The quick brown fox jumps over the lazy dog. ".repeat(2000),
      `see https://example.com/${"a".repeat(200)} and ${"=".repeat(100)}`,
      "日本語のテキストと English の混在。".repeat(100),
    ];
    for (const text of texts) expect(countTokens(text)).toBe(countExactly(text));
  });

  it("counts one very long word in linear time (the tokenizer alone takes minutes on it)", () => {
    const letters = Array.from({ length: 400_000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join("");
    for (const text of ["x".repeat(400_000), " ".repeat(400_000), "😀".repeat(200_000), letters]) {
      const started = performance.now();
      const tokens = countTokens(text);
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(tokens).toBeGreaterThan(0);
    }
    // cuts cost at most a token each: close to the exact count where that one is affordable
    const word = "x".repeat(20_000);
    expect(countTokens(word)).toBeGreaterThanOrEqual(countExactly(word));
    expect(countTokens(word)).toBeLessThanOrEqual(countExactly(word) + Math.ceil(word.length / 256));
  });
});
