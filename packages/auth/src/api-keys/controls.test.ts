import { describe, expect, it } from "vitest";
import { checkKeyAccess, checkKeyModel, compileAccess, NO_CONTROLS, parseIpOrCidr } from "./controls";

const access = (controls: Partial<typeof NO_CONTROLS>) => compileAccess("key_1", { ...NO_CONTROLS, ...controls });
const refusal = (fn: () => void): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
};

describe("key controls checked without the database", () => {
  it("parses IPs and CIDRs, v4 and v6, and refuses anything else", () => {
    expect(parseIpOrCidr("10.0.0.0/8")).toEqual({ address: "10.0.0.0", family: "ipv4", prefix: 8 });
    expect(parseIpOrCidr("2001:db8::/32")).toEqual({ address: "2001:db8::", family: "ipv6", prefix: 32 });
    expect(parseIpOrCidr("::1")).toEqual({ address: "::1", family: "ipv6", prefix: 128 });
    for (const bad of ["10.0.0.0/33", "::/129", "10.0.0.256", "10.0.0.0/8/8", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/08x", "fe80::1%eth0", "host", ""]) {
      expect(parseIpOrCidr(bad), bad).toBeNull();
    }
  });

  it("refuses in CONTRACT 10's order: expired before the address", () => {
    const now = Date.UTC(2030, 0, 1);
    const both = access({ expiresAt: new Date(now), allowedIps: ["10.0.0.0/8"] });
    expect(refusal(() => checkKeyAccess(both, now, "192.0.2.1"))).toBe("key_expired");
    expect(refusal(() => checkKeyAccess(both, now - 1, "192.0.2.1"))).toBe("ip_not_allowed");
    expect(refusal(() => checkKeyAccess(both, now - 1, "10.1.2.3"))).toBeUndefined();
  });

  it("matches IPv6 networks and IPv4 addresses written as IPv6", () => {
    const a = access({ allowedIps: ["2001:db8::/32", "192.0.2.0/24"] });
    expect(refusal(() => checkKeyAccess(a, 0, "2001:db8:1::5"))).toBeUndefined();
    expect(refusal(() => checkKeyAccess(a, 0, "::ffff:192.0.2.9"))).toBeUndefined();
    expect(refusal(() => checkKeyAccess(a, 0, "2001:db9::1"))).toBe("ip_not_allowed");
    expect(refusal(() => checkKeyAccess(a, 0, undefined))).toBe("ip_not_allowed");
  });

  it("allowed_models: null allows every model; a list only its own", () => {
    expect(refusal(() => checkKeyModel(access({}), "anything"))).toBeUndefined();
    const a = access({ allowedModels: ["textA-4"] });
    expect(refusal(() => checkKeyModel(a, "textA-4"))).toBeUndefined();
    expect(refusal(() => checkKeyModel(a, "textA-4-turbo"))).toBe("model_not_allowed");
  });
});
