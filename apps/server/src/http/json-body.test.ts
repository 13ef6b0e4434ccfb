import { describe, expect, it } from "vitest";
import { jsonDepthExceeds } from "./json-body";

const depth = (n: number) => Buffer.from(`${"[".repeat(n)}${"]".repeat(n)}`);

describe("jsonDepthExceeds", () => {
  it("measures object and array nesting", () => {
    expect(jsonDepthExceeds(depth(3), 3)).toBe(false);
    expect(jsonDepthExceeds(depth(4), 3)).toBe(true);
    expect(jsonDepthExceeds(Buffer.from('{"a":{"b":[{"c":1}]}}'), 4)).toBe(false);
    expect(jsonDepthExceeds(Buffer.from('{"a":{"b":[{"c":1}]}}'), 3)).toBe(true);
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    expect(jsonDepthExceeds(Buffer.from('{"a":"[[[[{{{{"}'), 1)).toBe(false);
    expect(jsonDepthExceeds(Buffer.from('{"a":"x\\"[[[[", "b":"\\\\"}'), 1)).toBe(false);
  });
});
