import { describe, expect, it } from "vitest";
import { ferretdbEnv } from "../src/ferretdb";

describe("embedded FerretDB environment", () => {
  it("runs Go's collector at 400 % heap growth by default and keeps the rest of the environment", () => {
    const env = ferretdbEnv({ PATH: "/usr/bin", HOME: "/root" });
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/root", GOGC: "400" });
  });

  it("leaves an explicit GOGC alone", () => {
    expect(ferretdbEnv({ GOGC: "off" }).GOGC).toBe("off");
    expect(ferretdbEnv({ GOGC: "100" }).GOGC).toBe("100");
  });
});
