import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { countTokens } from "../src/tokens";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** 90,000 distinct made-up words, each its own merge-cache entry, in 2,000-word texts. */
function distinctWords(): string[] {
  const texts: string[] = [];
  for (let t = 0; t < 45; t++) {
    const words: string[] = [];
    for (let i = 0; i < 2_000; i++) words.push(`q${(t * 2_000 + i).toString(36)}zx`);
    texts.push(words.join(" "));
  }
  return texts;
}

describe("countTokens", () => {
  it("counts cl100k_base tokens", () => {
    expect(countTokens("")).toBe(0);
    expect(countTokens("hello world")).toBe(2);
    expect(countTokens("Hello, how are you today?")).toBe(7);
  });

  it("keeps the tokenizer's merge cache bounded on varied text", () => {
    const texts = distinctWords();
    countTokens("warm up");
    gc();
    const before = process.memoryUsage().heapUsed;
    let tokens = 0;
    for (const text of texts) tokens += countTokens(text);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    expect(tokens).toBeGreaterThan(90_000);
    // with the library's default of 100,000 entries these 90,000 words stay cached: ~9 MB
    expect(grown).toBeLessThan(5 * 1024 * 1024);
  });
});
