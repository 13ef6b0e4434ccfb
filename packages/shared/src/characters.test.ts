import { describe, expect, it } from "vitest";
import { characterCount } from "./characters";

describe("characterCount", () => {
  it("counts code points, as spreading the string does", () => {
    for (const text of ["", "a", "hello", "\u{1F44D}", "a\u{1F44D}b\u{1F1F8}\u{1F1F8}", "\u{1F44D}".repeat(1000), "\ud800", "\udc00\ud800", "x\ud800"]) {
      expect(characterCount(text)).toBe([...text].length);
    }
  });
});
