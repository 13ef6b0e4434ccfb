import { describe, expect, it } from "vitest";
import { EMPTY_CONTROLS, controlsFromForm, controlsSummary, formFromKey } from "./controls";

const now = Date.parse("2026-12-06T12:00:00Z");
const noControls = { limit: null, limit_reset: "never" as const, allowed_models: null, rate_limit: null, expires_at: null, allowed_ips: null };

describe("controlsFromForm", () => {
  it("turns an empty form into no restrictions at all (null clears each control)", () => {
    expect(controlsFromForm(EMPTY_CONTROLS, now)).toEqual({ input: noControls });
  });

  it("reads every control the API takes", () => {
    const result = controlsFromForm({
      limit: "$12.5", limitReset: "monthly", allowedModels: ["textA-4"], requestsPerMinute: "10", concurrentRequests: "2",
      expiresAt: "2027-01-01T00:00", allowedIps: "203.0.113.7, 10.0.0.0/8\n10.0.0.0/8",
    }, now);
    expect(result).toEqual({
      input: {
        limit: 12.5, limit_reset: "monthly", allowed_models: ["textA-4"], rate_limit: { requests_per_minute: 10, concurrent_requests: 2 },
        expires_at: new Date("2027-01-01T00:00").toISOString(), allowed_ips: ["203.0.113.7", "10.0.0.0/8"],
      },
    });
  });

  it("says what is wrong before asking the server", () => {
    const problem = (patch: Partial<typeof EMPTY_CONTROLS>) => {
      const result = controlsFromForm({ ...EMPTY_CONTROLS, ...patch }, now);
      return "error" in result ? result.error : null;
    };
    expect(problem({ limit: "1.005" })).toMatch(/two decimals/);
    expect(problem({ limit: "0" })).toMatch(/above \$0/);
    expect(problem({ limit: "-1" })).toMatch(/two decimals/);
    expect(problem({ limitReset: "daily" })).toMatch(/needs an amount/);
    expect(problem({ requestsPerMinute: "10" })).toMatch(/both rate limits/);
    expect(problem({ requestsPerMinute: "1.5", concurrentRequests: "1" })).toMatch(/whole numbers/);
    expect(problem({ expiresAt: "2020-01-01T00:00" })).toMatch(/future/);
  });
});

describe("formFromKey", () => {
  it("shows a key's controls in the form, and back unchanged", () => {
    const key = { limit: 5, limit_reset: "weekly" as const, allowed_models: ["textA-4"], rate_limit: { requests_per_minute: 5, concurrent_requests: 1 }, expires_at: null, allowed_ips: ["10.0.0.0/8"] };
    const form = formFromKey(key);
    expect(form).toMatchObject({ limit: "5.00", limitReset: "weekly", requestsPerMinute: "5", allowedIps: "10.0.0.0/8" });
    expect(controlsFromForm(form, now)).toEqual({ input: key });
  });
});

describe("controlsSummary", () => {
  it("names each restriction briefly", () => {
    expect(controlsSummary(noControls, (iso) => iso.slice(0, 10))).toEqual([]);
    expect(controlsSummary({ ...noControls, allowed_models: ["a", "b"], rate_limit: { requests_per_minute: 10, concurrent_requests: 2 }, allowed_ips: ["10.0.0.0/8"], expires_at: "2027-01-01T00:00:00.000Z" }, (iso) => iso.slice(0, 10)))
      .toEqual(["2 models", "10/min, 2 at once", "IP 10.0.0.0/8", "expires 2027-01-01"]);
  });
});
