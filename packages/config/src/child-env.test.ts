import { describe, expect, it } from "vitest";
import { embeddedDatabaseEnv } from "./child-env";

describe("embedded FerretDB environment", () => {
  it("runs Go's collector at 400 % heap growth by default and keeps the rest of the environment", () => {
    const env = embeddedDatabaseEnv({ PATH: "/usr/bin", HOME: "/root" });
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/root", GOGC: "400" });
  });

  it("leaves an explicit GOGC alone", () => {
    expect(embeddedDatabaseEnv({ GOGC: "off" }).GOGC).toBe("off");
    expect(embeddedDatabaseEnv({ GOGC: "100" }).GOGC).toBe("100");
  });
});
