import { describe, expect, it } from "vitest";
import { fieldWithLoneSurrogate, fieldWithNul } from "./nul-bytes";

describe("fieldWithNul", () => {
  it("finds nothing in clean bodies", () => {
    expect(fieldWithNul({ email: "a@b.c", tags: ["x", { y: "z" }], n: 1, ok: true, none: null })).toBeUndefined();
  });

  it("names the first field holding a NUL, nested and in arrays", () => {
    expect(fieldWithNul({ email: "a\u0000@b.c" })).toBe("email");
    expect(fieldWithNul({ a: { b: ["ok", "n\u0000ul"] } })).toBe("a.b[1]");
    expect(fieldWithNul("x\u0000")).toBe("body");
  });

  it("catches a NUL in a key too", () => {
    expect(fieldWithNul({ "na\u0000me": "x" })).toBe("na\\u0000me");
  });

  it("finds half a surrogate pair, never a whole one", () => {
    expect(fieldWithLoneSurrogate({ name: "emoji \u{1F511} 🔑" })).toBeUndefined();
    expect(fieldWithLoneSurrogate({ name: "x\ud800y" })).toBe("name");
    expect(fieldWithLoneSurrogate({ a: ["ok", "\udfff"] })).toBe("a[1]");
  });
});
