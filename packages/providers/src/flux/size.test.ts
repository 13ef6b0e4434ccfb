import { describe, expect, it } from "vitest";
import { sizeForAspectRatio } from "./size";

describe("sizeForAspectRatio", () => {
  it("maps ratios to about one megapixel in multiples of 32", () => {
    expect(sizeForAspectRatio("1:1")).toEqual({ width: 1024, height: 1024 });
    expect(sizeForAspectRatio("16:9")).toEqual({ width: 1376, height: 768 });
    expect(sizeForAspectRatio("4:3")).toEqual({ width: 1184, height: 896 });
    expect(sizeForAspectRatio("9:16")).toEqual({ width: 768, height: 1376 });
  });

  it("rejects malformed and extreme ratios", () => {
    for (const bad of ["", "1x1", "0:1", "1:0", "-1:2", "10:1", "a:b", "1:1:1"]) expect(sizeForAspectRatio(bad)).toBeUndefined();
  });
});
