import { describe, expect, it } from "vitest";
import { compileAccess, NO_CONTROLS } from "./controls";
import { VerifierCache } from "./verifier-cache";

const key = { keyId: "key_1", userId: "usr_1", access: compileAccess("key_1", NO_CONTROLS) };

describe("VerifierCache", () => {
  it("serves entries until their TTL passes", () => {
    let t = 0;
    const cache = new VerifierCache(900, 10, () => t);
    cache.set("h", key, cache.snapshot());
    t = 899;
    expect(cache.get("h")).toEqual(key);
    t = 900;
    expect(cache.get("h")).toBeUndefined();
  });

  it("caches negative answers too", () => {
    const cache = new VerifierCache(900, 10, () => 0);
    cache.set("unknown", null, cache.snapshot());
    expect(cache.get("unknown")).toBeNull();
  });

  it("evicts at once and refuses a lookup that started before the eviction", () => {
    const cache = new VerifierCache(900, 10, () => 0);
    const before = cache.snapshot();
    cache.set("h", key, before);
    cache.evict("h");
    expect(cache.get("h")).toBeUndefined();
    cache.set("h", key, before);
    expect(cache.get("h")).toBeUndefined();
  });

  it("counts an answer's age from when the lookup started, so a slow read is not served a whole TTL after it lands", () => {
    let t = 0;
    const cache = new VerifierCache(900, 10, () => t);
    const asked = cache.snapshot();
    t = 400; // the database answered slowly: the key may have been revoked elsewhere since it was read
    cache.set("h", key, asked);
    t = 899;
    expect(cache.get("h")).toEqual(key);
    t = 900;
    expect(cache.get("h")).toBeUndefined();
  });
});

describe("VerifierCache refresh-ahead", () => {
  it("asks exactly one caller to reload an entry past half its TTL, and a reload restarts the TTL", () => {
    let t = 0;
    const cache = new VerifierCache(900, 10, () => t);
    cache.set("h", key, cache.snapshot());
    t = 449;
    expect(cache.refreshDue("h")).toBe(false);
    t = 450;
    expect(cache.refreshDue("h")).toBe(true);
    expect(cache.refreshDue("h")).toBe(false);
    expect(cache.get("h")).toEqual(key);
    cache.set("h", key, cache.snapshot());
    t = 1_300;
    expect(cache.get("h")).toEqual(key);
  });

  it("never serves an answer older than the TTL when no reload lands", () => {
    let t = 0;
    const cache = new VerifierCache(900, 10, () => t);
    cache.set("h", null, cache.snapshot());
    t = 500;
    expect(cache.refreshDue("h")).toBe(true);
    t = 900;
    expect(cache.get("h")).toBeUndefined();
    expect(cache.refreshDue("h")).toBe(false);
  });
});
