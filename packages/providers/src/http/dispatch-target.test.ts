import { describe, expect, it } from "vitest";
import { dispatchTarget } from "./dispatch-target";

describe("dispatchTarget", () => {
  it("splits a URL into origin and path with its query", () => {
    expect(dispatchTarget("https://api.example.com/v1/chat/completions")).toEqual({ origin: "https://api.example.com", path: "/v1/chat/completions" });
    expect(dispatchTarget("http://127.0.0.1:8080/prefix/get_result?id=abc")).toEqual({ origin: "http://127.0.0.1:8080", path: "/prefix/get_result?id=abc" });
  });

  it("answers the same target for the same URL", () => {
    expect(dispatchTarget("https://a.example/v1/x")).toBe(dispatchTarget("https://a.example/v1/x"));
  });

  it("keeps working past its cache bound", () => {
    for (let i = 0; i < 1_200; i++) expect(dispatchTarget(`https://a.example/v1/voices/${i}`).path).toBe(`/v1/voices/${i}`);
  });

  it("rejects an invalid URL", () => {
    expect(() => dispatchTarget("not a url")).toThrow(TypeError);
  });
});
