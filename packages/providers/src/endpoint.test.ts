import { describe, expect, it } from "vitest";
import { loadConfig } from "@gw/config";
import { findModel } from "./catalog";
import { baseUrlOf, createEndpointResolver } from "./endpoint";

describe("upstream base URLs", () => {
  it("appends CONTRACT 4's /v1 paths to the base as configured, or to its OpenAI-style spelling ending in /v1", () => {
    expect(baseUrlOf("http://127.0.0.1:9000")).toBe("http://127.0.0.1:9000");
    expect(baseUrlOf("http://127.0.0.1:9000/")).toBe("http://127.0.0.1:9000");
    expect(baseUrlOf("https://api.example.com/v1")).toBe("https://api.example.com");
    expect(baseUrlOf("https://api.example.com/v1/")).toBe("https://api.example.com");
    expect(baseUrlOf("https://example.com/proxy/openai")).toBe("https://example.com/proxy/openai");
    expect(baseUrlOf("https://example.com/v1beta")).toBe("https://example.com/v1beta");
  });

  it("resolves a model's endpoint from its provider's settings", () => {
    const config = loadConfig({ NODE_ENV: "test", SESSION_SECRET: "x".repeat(32), TEXTA_BASE_URL: "http://127.0.0.1:9000/v1/", TEXTA_API_KEY: "k" });
    const model = findModel(config, "textA-4");
    if (!model) throw new Error("textA-4 is in the catalog");
    expect(createEndpointResolver(config)(model)).toEqual({ baseUrl: "http://127.0.0.1:9000", apiKey: "k" });
  });
});
