import { describe, expect, it } from "vitest";
import { baseUrlFor, snippet } from "./snippets";

const input = { baseUrl: baseUrlFor("https://gw.example.com"), apiKey: "ak-live-abc123", model: "textA-4" };

describe("quick-start snippets", () => {
  it("names the page's origin + /v1 as the base URL", () => {
    expect(baseUrlFor("http://127.0.0.1:3000")).toBe("http://127.0.0.1:3000/v1");
    expect(baseUrlFor("https://gw.example.com/")).toBe("https://gw.example.com/v1");
  });

  it("gives a curl call with the key, the JSON body and the chat completions URL", () => {
    const curl = snippet("curl", input);
    expect(curl).toContain("curl https://gw.example.com/v1/chat/completions");
    expect(curl).toContain('-H "Authorization: Bearer ak-live-abc123"');
    const body = /-d '(.*)'$/m.exec(curl)?.[1];
    expect(JSON.parse(body ?? "")).toEqual({ model: "textA-4", messages: [{ role: "user", content: "Say hello in five words." }] });
  });

  it("configures the official OpenAI clients with the base URL and the key", () => {
    expect(snippet("python", input)).toContain('OpenAI(base_url="https://gw.example.com/v1", api_key="ak-live-abc123")');
    expect(snippet("node", input)).toContain('new OpenAI({ baseURL: "https://gw.example.com/v1", apiKey: "ak-live-abc123" })');
    expect(snippet("node", input)).toContain('model: "textA-4"');
  });
});
