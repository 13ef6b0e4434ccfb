import { describe, expect, it } from "vitest";
import { upstreamStatusError } from "./upstream-errors";

describe("upstreamStatusError", () => {
  it("a refused request is 400 invalid_parameter carrying the upstream's message as one sentence", () => {
    const err = upstreamStatusError(400, "Invalid size '512x512'. Supported sizes are 1024x1024, 1792x1024.");
    expect(err.code).toBe("invalid_parameter");
    expect(err.message).toBe("The upstream provider rejected the request: Invalid size '512x512'. Supported sizes are 1024x1024, 1792x1024.");
    expect(upstreamStatusError(422, "bad field").message).toBe("The upstream provider rejected the request: bad field.");
    expect(upstreamStatusError(413, undefined).message).toBe("The upstream provider rejected the request: HTTP 413.");
  });

  it("any other status is 502 upstream_error, with or without a message", () => {
    expect(upstreamStatusError(529, "Overloaded").message).toBe("The upstream provider failed (HTTP 529): Overloaded.");
    expect(upstreamStatusError(500, "Oops!").message).toBe("The upstream provider failed (HTTP 500): Oops!");
    const bare = upstreamStatusError(502, undefined);
    expect(bare.code).toBe("upstream_error");
    expect(bare.message).toBe("The upstream provider failed (HTTP 502).");
  });

  it("a refusal of the gateway's own upstream key does not pass the upstream's wording on", () => {
    for (const status of [401, 403]) {
      const err = upstreamStatusError(status, "Incorrect API key provided: sk-proj-****abcd.");
      expect(err.code).toBe("upstream_error");
      expect(err.message).toBe(`The upstream provider failed (HTTP ${status}): it refused the gateway's credentials.`);
    }
  });

  it("a 402 (the operator's provider account cannot pay) is not passed on as if the caller's credits ran out", () => {
    const err = upstreamStatusError(402, "Insufficient credits");
    expect(err.code).toBe("upstream_error");
    expect(err.message).toBe("The upstream provider failed (HTTP 402): it refused the gateway's account for payment.");
  });

  it("a 429 does not pass on the upstream's wording, which names the operator's organization and quota", () => {
    const err = upstreamStatusError(429, "Rate limit reached for gpt-4 in organization org-abc123 on requests per min (RPM): Limit 500.");
    expect(err.code).toBe("upstream_error");
    expect(err.message).toBe("The upstream provider failed (HTTP 429): it is rate-limiting the gateway.");
  });
});
