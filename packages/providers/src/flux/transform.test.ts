import { describe, expect, it } from "vitest";
import { parseSubmitResponse } from "./transform";

const endpoint = (baseUrl: string) => ({ baseUrl, apiKey: "bfl-key" });
const pollingUrlOf = (polling_url: string, baseUrl = "https://api.bfl.ai") => parseSubmitResponse({ id: "t1", polling_url }, endpoint(baseUrl)).pollingUrl;

describe("the Flux polling URL gets our x-key, so it must be on the upstream's own site", () => {
  it("takes the base URL's host, other hosts of its domain, and relative URLs", () => {
    expect(pollingUrlOf("https://api.bfl.ai/v1/get_result?id=t1")).toBe("https://api.bfl.ai/v1/get_result?id=t1");
    expect(pollingUrlOf("https://api.us1.bfl.ai/v1/get_result?id=t1")).toBe("https://api.us1.bfl.ai/v1/get_result?id=t1");
    expect(pollingUrlOf("https://bfl.ai/v1/get_result?id=t1")).toBe("https://bfl.ai/v1/get_result?id=t1");
    expect(pollingUrlOf("/v1/get_result?id=t1")).toBe("https://api.bfl.ai/v1/get_result?id=t1");
    // an address is only itself (another port of it is the same host), but every loopback address is this machine
    expect(pollingUrlOf("http://127.0.0.1:9999/v1/get_result?id=t1", "http://127.0.0.1:8080")).toBe("http://127.0.0.1:9999/v1/get_result?id=t1");
    expect(pollingUrlOf("http://127.0.0.2:9999/poll", "http://localhost:8080")).toBe("http://127.0.0.2:9999/poll");
  });

  it("refuses other sites, look-alike suffixes, other schemes and other addresses as a 502 upstream_error", () => {
    for (const [url, base] of [
      ["https://evil.example/v1/get_result?id=t1", "https://api.bfl.ai"],
      ["https://notbfl.ai/v1/get_result?id=t1", "https://api.bfl.ai"],
      ["https://api.bfl.ai.evil.example/poll", "https://api.bfl.ai"],
      ["file:///etc/passwd", "https://api.bfl.ai"],
      ["http://10.0.0.1/poll", "http://127.0.0.1:8080"],
      ["http://evil.localhost/poll", "http://localhost:8080"],
      ["http://10.0.0.1/poll", "http://localhost:8080"],
    ] as const) {
      expect(() => pollingUrlOf(url, base)).toThrow(expect.objectContaining({ code: "upstream_error", status: 502 }));
    }
  });
});
