import { describe, expect, it } from "vitest";
import { KEY_PREFIX_LENGTH, generateApiKey, hashApiKey, isWellFormedApiKey } from "./key-format";

describe("api key format", () => {
  it("generates ak-<env>-<40 base62> with a 12-character prefix and its sha256", () => {
    const { key, prefix, hash } = generateApiKey("live");
    expect(key).toMatch(/^ak-live-[0-9A-Za-z]{40}$/);
    expect(prefix).toBe(key.slice(0, KEY_PREFIX_LENGTH));
    expect(prefix).toHaveLength(12);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(hashApiKey(key));
    expect(hash).not.toContain(key.slice(8));
  });

  it("never repeats a key", () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey("test").key));
    expect(keys.size).toBe(1000);
  });

  it("recognises well-formed keys only", () => {
    expect(isWellFormedApiKey(generateApiKey("live").key)).toBe(true);
    expect(isWellFormedApiKey(generateApiKey("dev2").key)).toBe(true);
    expect(isWellFormedApiKey("ak-live-short")).toBe(false);
    expect(isWellFormedApiKey(`sk-live-${"a".repeat(40)}`)).toBe(false);
    expect(isWellFormedApiKey(`ak-LIVE-${"a".repeat(40)}`)).toBe(false);
    expect(isWellFormedApiKey(`ak-live-${"a".repeat(40)} `)).toBe(false);
    expect(isWellFormedApiKey(`ak-live-${"a".repeat(65)}`)).toBe(false);
    expect(isWellFormedApiKey("")).toBe(false);
  });
});
