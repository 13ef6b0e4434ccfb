import { describe, expect, it } from "vitest";
import { newId, randomBase62 } from "./ids";

describe("ids", () => {
  it("makes prefixed base62 ids of the asked length", () => {
    expect(newId("req")).toMatch(/^req_[0-9A-Za-z]{24}$/);
    expect(randomBase62(40)).toMatch(/^[0-9A-Za-z]{40}$/);
  });

  it("never repeats across many pool refills", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) seen.add(newId("x", 16));
    expect(seen.size).toBe(20_000);
  });

  it("uses every base62 character about equally", () => {
    const counts = new Map<string, number>();
    for (const c of randomBase62(62_000)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(n).toBeGreaterThan(700);
  });
});
