import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadEnvFile } from "./env-file";

const NAMES = ["GW_ENV_FILE_ONLY", "GW_ENV_FILE_BOTH"];

describe("loadEnvFile (CONTRACT 15)", () => {
  afterEach(() => {
    for (const name of NAMES) Reflect.deleteProperty(process.env, name);
  });

  it("reads the root's .env into process.env; a variable already set in the process wins", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "gw-env-"));
    writeFileSync(path.join(dir, ".env"), "# a comment\nGW_ENV_FILE_ONLY=from-file\nGW_ENV_FILE_BOTH=from-file\n");
    process.env.GW_ENV_FILE_BOTH = "from-process";
    expect(loadEnvFile(dir, {})).toBe(path.join(dir, ".env"));
    expect(process.env.GW_ENV_FILE_ONLY).toBe("from-file");
    expect(process.env.GW_ENV_FILE_BOTH).toBe("from-process");
  });

  it("reads nothing without a .env, or with ENV_FILE empty; ENV_FILE names another file", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "gw-env-"));
    expect(loadEnvFile(dir, {})).toBeUndefined();
    writeFileSync(path.join(dir, ".env"), "GW_ENV_FILE_ONLY=from-file\n");
    expect(loadEnvFile(dir, { ENV_FILE: "" })).toBeUndefined();
    expect(process.env.GW_ENV_FILE_ONLY).toBeUndefined();
    const other = path.join(dir, "other.env");
    writeFileSync(other, "GW_ENV_FILE_ONLY=other\n");
    expect(loadEnvFile(dir, { ENV_FILE: other })).toBe(other);
    expect(process.env.GW_ENV_FILE_ONLY).toBe("other");
  });
});

describe(".env.example", () => {
  it("lists every setting, each with a comment above it", async () => {
    const { readFileSync } = await import("node:fs");
    const { fileURLToPath } = await import("node:url");
    const { ENV_VARIABLES } = await import("./schema");
    const lines = readFileSync(fileURLToPath(new URL("../../../.env.example", import.meta.url)), "utf8").split("\n");
    for (const name of [...ENV_VARIABLES, "ENV_FILE", "GOGC"]) {
      const at = lines.findIndex((line) => new RegExp(`^(# )?${name}=`).test(line));
      expect(at, name).toBeGreaterThan(0);
      // a comment (not a commented-out setting) in its block: the lines above it up to a blank one
      let start = at;
      while (start > 0 && lines[start - 1] !== "") start--;
      expect(lines.slice(start, at).some((line) => /^# (?![A-Z0-9_]+=)/.test(line)), name).toBe(true);
    }
  });
});
