import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./load";

const base = () => ({ DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "gw-config-")) });

describe("loadConfig: error debug details (SPEC 7.1, CONTRACT 1)", () => {
  it("shows no debug details when NODE_ENV is unset, although it runs with development defaults", () => {
    const config = loadConfig(base());
    expect(config.nodeEnv).toBe("development");
    expect(config.errorDebug).toBe(false);
  });

  it("shows them only with NODE_ENV=development set explicitly", () => {
    expect(loadConfig({ ...base(), NODE_ENV: "development" }).errorDebug).toBe(true);
    expect(loadConfig({ ...base(), NODE_ENV: "test" }).errorDebug).toBe(false);
    expect(loadConfig({ ...base(), NODE_ENV: "production", SESSION_SECRET: "x".repeat(40) }).errorDebug).toBe(false);
  });
});

describe("loadConfig: HEAP_GROWING_PERCENT", () => {
  it("bounds heap growth to 50 % by default, takes 0 (V8 decides) to 400, and refuses anything else", () => {
    expect(loadConfig(base()).heapGrowingPercent).toBe(50);
    expect(loadConfig({ ...base(), HEAP_GROWING_PERCENT: "0" }).heapGrowingPercent).toBe(0);
    expect(loadConfig({ ...base(), HEAP_GROWING_PERCENT: "120" }).heapGrowingPercent).toBe(120);
    expect(() => loadConfig({ ...base(), HEAP_GROWING_PERCENT: "-5" })).toThrow(/HEAP_GROWING_PERCENT/);
    expect(() => loadConfig({ ...base(), HEAP_GROWING_PERCENT: "lots" })).toThrow(/HEAP_GROWING_PERCENT/);
  });
});
