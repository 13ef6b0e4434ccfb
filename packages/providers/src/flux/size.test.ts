import { describe, expect, it } from "vitest";
import { FLUX_MAX_SIDE, FLUX_MIN_SIDE, FLUX_SIDE_STEP, sizeForAspectRatio } from "./size";

describe("sizeForAspectRatio", () => {
  it("maps ratios to about one megapixel in multiples of 32, never above 1024x1024 in area", () => {
    expect(sizeForAspectRatio("1:1")).toEqual({ width: 1024, height: 1024 });
    expect(sizeForAspectRatio("16:9")).toEqual({ width: 1312, height: 736 });
    expect(sizeForAspectRatio("9:16")).toEqual({ width: 736, height: 1312 });
    expect(sizeForAspectRatio("4:3")).toEqual({ width: 1152, height: 864 });
    expect(sizeForAspectRatio("3:2")).toEqual({ width: 1248, height: 832 });
  });

  it("keeps wide ratios inside Flux's 256..1440 sides, as close to the ratio as the sides allow", () => {
    expect(sizeForAspectRatio("4:1")).toEqual({ width: 1408, height: 352 });
    expect(sizeForAspectRatio("1:4")).toEqual({ width: 352, height: 1408 });
    expect(sizeForAspectRatio("3:1")).toEqual({ width: 1440, height: 480 });
    expect(sizeForAspectRatio("21:9")).toEqual({ width: 1408, height: 608 });
    expect(sizeForAspectRatio("2:1")).toEqual({ width: 1408, height: 704 });
  });

  it("every accepted ratio gives sides Flux accepts, within 1.5% of the ratio, at most one megapixel", () => {
    for (let w = 1; w <= 32; w++) {
      for (let h = 1; h <= 32; h++) {
        const size = sizeForAspectRatio(`${w}:${h}`);
        if (w / h > 4 || h / w > 4) {
          expect(size).toBeUndefined();
          continue;
        }
        if (!size) throw new Error(`${w}:${h} refused`);
        for (const side of [size.width, size.height]) {
          expect(side % FLUX_SIDE_STEP).toBe(0);
          expect(side).toBeGreaterThanOrEqual(FLUX_MIN_SIDE);
          expect(side).toBeLessThanOrEqual(FLUX_MAX_SIDE);
        }
        expect(size.width * size.height).toBeLessThanOrEqual(1024 * 1024);
        expect(Math.abs(Math.log(size.width / size.height / (w / h)))).toBeLessThan(0.015);
      }
    }
  });

  it("rejects malformed and extreme ratios", () => {
    for (const bad of ["", "1x1", "0:1", "1:0", "-1:2", "10:1", "a:b", "1:1:1"]) expect(sizeForAspectRatio(bad)).toBeUndefined();
  });
});
