// Image adapters: OpenAI Images (imageA) and Flux submit + poll (imageB), against the fakes over real HTTP.
import { FAKE_KEYS } from "@gw/test-support";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ImageRequest } from "../src/types";
import { caught, noAbort, startProviderHarness, type ProviderHarness } from "./helpers";

let h: ProviderHarness;

beforeAll(async () => { h = await startProviderHarness(); });
afterAll(async () => { await h.close(); });
beforeEach(() => { h.fakes.clearAll(); });

const imageA = (extra: Partial<ImageRequest> = {}): ImageRequest =>
  ({ model: h.model("imageA"), prompt: "a red fox", width: 512, height: 512, count: 2, signal: noAbort(), ...extra });
const imageB = (extra: Partial<ImageRequest> = {}): ImageRequest =>
  ({ model: h.model("imageB-1-dev"), prompt: "a lighthouse", width: 1024, height: 1024, count: 1, signal: noAbort(), ...extra });

describe("openai images (imageA)", () => {
  it("asks for n images of size WxH and returns their URLs", async () => {
    const result = await h.gateway.generateImage(imageA({ style: "cute" }));
    expect(result.images).toHaveLength(2);
    expect(result.images[0]).toMatchObject({ width: 512, height: 512 });
    expect(result.images[0]?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/images\/.+\.png$/);
    const sent = h.fakes.imageA.lastRequest();
    expect(sent?.headers.authorization).toBe(`Bearer ${FAKE_KEYS.imageA}`);
    expect(sent?.json).toEqual({ model: "imageA", prompt: "a red fox, in cute style", n: 2, size: "512x512", response_format: "url" });
  });

  it("sends the request's upstream model name in place of the model's own (image endpoint A versions)", async () => {
    await h.gateway.generateImage(imageA({ upstreamModel: "dall-e-2" }));
    expect(h.fakes.imageA.lastRequest()?.json).toMatchObject({ model: "dall-e-2", response_format: "url" });
  });

  it("leaves response_format out for OpenAI's GPT image models, which refuse it and answer base64", async () => {
    const png = (await h.gateway.generateImage(imageA({ count: 1, responseFormat: "b64_json" }))).images[0]?.b64Json ?? "";
    h.fakes.imageA.failNext(1, { kind: "status", status: 200, body: { created: 1, data: [{ b64_json: png }] } });
    const result = await h.gateway.generateImage(imageA({ count: 1, upstreamModel: "gpt-image-1" }));
    expect(result.images[0]?.b64Json).toBe(png);
    const sent = h.fakes.imageA.lastRequest()?.json;
    expect(sent).toMatchObject({ model: "gpt-image-1", n: 1, size: "512x512" });
    expect(sent).not.toHaveProperty("response_format");
  });

  it("returns base64 images when asked", async () => {
    const result = await h.gateway.generateImage(imageA({ count: 1, responseFormat: "b64_json" }));
    expect(Buffer.from(result.images[0]?.b64Json ?? "", "base64").subarray(1, 4).toString()).toBe("PNG");
  });

  it("refuses base64 data that is not an image", async () => {
    const junk = Buffer.from("{\"error\":\"oops\"}").toString("base64");
    h.fakes.imageA.failNext(1, { kind: "status", status: 200, body: { created: 1, data: [{ b64_json: junk }] } });
    expect((await caught(() => h.gateway.generateImage(imageA({ count: 1, responseFormat: "b64_json" })))).code).toBe("upstream_error");
  });

  it("keeps a content policy refusal as content_policy_violation", async () => {
    h.fakes.imageA.failNext(1, { kind: "status", status: 400, body: { error: { message: "Your request was rejected by our safety system", code: "content_policy_violation" } } });
    expect((await caught(() => h.gateway.generateImage(imageA()))).code).toBe("content_policy_violation");
  });
});

describe("flux (imageB)", () => {
  it("submits, polls until Ready and returns the sample URL", async () => {
    const result = await h.gateway.generateImage(imageB({ steps: 30, seed: 7, guidanceScale: 3.5 }));
    expect(result.images).toEqual([{ url: expect.stringMatching(/\/samples\/.+\.png$/), width: 1024, height: 1024, seed: 7 }]);
    const submit = h.fakes.imageB.requests[0];
    expect(submit?.path).toBe("/v1/imageB-1-dev");
    expect(submit?.headers["x-key"]).toBe(FAKE_KEYS.imageB);
    expect(submit?.json).toEqual({ prompt: "a lighthouse", width: 1024, height: 1024, steps: 30, guidance: 3.5, seed: 7 });
    const polls = h.fakes.imageB.requests.filter((r) => r.path === "/v1/get_result");
    expect(polls).toHaveLength(2);
    expect(polls[0]?.headers["x-key"]).toBe(FAKE_KEYS.imageB);
  });

  it("makes N submissions in parallel with distinct seeds", async () => {
    const result = await h.gateway.generateImage(imageB({ count: 3, seed: 100 }));
    expect(result.images.map((i) => i.seed)).toEqual([100, 101, 102]);
    expect(h.fakes.imageB.requests.filter((r) => r.method === "POST")).toHaveLength(3);
  });

  it("does not poll (nor send its key to) a polling_url outside the upstream's own site", async () => {
    h.fakes.imageB.failNext(1, { kind: "status", status: 200, body: { id: "t-1", polling_url: "http://169.254.169.254/v1/get_result?id=t-1" } }, { path: "/v1/imageB-1-dev" });
    const err = await caught(() => h.gateway.generateImage(imageB({})));
    expect({ code: err.code, status: err.status }).toEqual({ code: "upstream_error", status: 502 });
    expect(err.message).toContain("169.254.169.254");
    expect(h.fakes.imageB.requests.filter((r) => r.method === "GET")).toHaveLength(0);
  });

  it("polls the conventional get_result URL when no polling_url is given", async () => {
    h.fakes.imageB.sendPollingUrl = false;
    await expect(h.gateway.generateImage(imageB())).resolves.toMatchObject({ images: [{ width: 1024 }] });
  });

  it("keeps polling through several Pending answers", async () => {
    h.fakes.imageB.pollsBeforeReady = 4;
    await h.gateway.generateImage(imageB());
    expect(h.fakes.imageB.requests.filter((r) => r.path === "/v1/get_result")).toHaveLength(5);
  });

  it("maps moderation to content_policy_violation and Error to upstream_error", async () => {
    h.fakes.imageB.finalStatus = "Content Moderated";
    expect((await caught(() => h.gateway.generateImage(imageB()))).code).toBe("content_policy_violation");
    h.fakes.imageB.finalStatus = "Request Moderated";
    expect((await caught(() => h.gateway.generateImage(imageB()))).code).toBe("content_policy_violation");
    h.fakes.imageB.finalStatus = "Error";
    expect((await caught(() => h.gateway.generateImage(imageB()))).code).toBe("upstream_error");
  });

  it("fails fast on a status it does not know, and on every failed one (no polling to the timeout)", async () => {
    for (const status of ["Weird", "Error", "Failed", "Task not found"]) {
      h.fakes.clearAll();
      h.fakes.imageB.finalStatus = status;
      const err = await caught(() => h.gateway.generateImage(imageB()));
      expect({ status, code: err.code, message: err.message }).toEqual({ status, code: "upstream_error", message: expect.stringContaining(status) });
      expect(h.fakes.imageB.requests.filter((r) => r.path === "/v1/get_result")).toHaveLength(2);
    }
  });

  it("refuses a Ready answer whose sample is not an http(s) URL, before downloading anything", async () => {
    for (const sample of ["not a url", "/relative/x.png", "file:///etc/passwd", "data:image/png;base64,AAAA"]) {
      h.fakes.imageB.failNext(1, { kind: "status", status: 200, body: { id: "x", status: "Ready", result: { sample } } }, { path: "/v1/get_result" });
      const err = await caught(() => h.gateway.generateImage(imageB({ responseFormat: "b64_json" })));
      expect({ sample, code: err.code }).toEqual({ sample, code: "upstream_error" });
    }
    expect(h.fakes.imageB.requests.filter((r) => r.path.startsWith("/samples/"))).toHaveLength(0);
  });

  it("downloads the sample as base64 and refuses one that is not an image", async () => {
    const ok = await h.gateway.generateImage(imageB({ responseFormat: "b64_json" }));
    expect(Buffer.from(ok.images[0]?.b64Json ?? "", "base64").subarray(1, 4).toString()).toBe("PNG");
    for (const fault of [{ kind: "garbage" }, { kind: "wrong-shape" }] as const) {
      h.fakes.imageB.failNext(1, fault, { path: "/samples/" });
      expect((await caught(() => h.gateway.generateImage(imageB({ responseFormat: "b64_json" })))).code).toBe("upstream_error");
    }
  });

  it("the fake refuses sides outside 256..1440 or not multiples of 32 with 422, as BFL does", async () => {
    for (const [width, height] of [[2048, 512], [512, 2048], [224, 1024], [1024, 1000]] as const) {
      const err = await caught(() => h.gateway.generateImage(imageB({ width, height })));
      expect({ width, height, code: err.code, message: err.message }).toEqual({ width, height, code: "invalid_parameter", message: expect.stringMatching(/(width|height): Input should/) });
    }
    await expect(h.gateway.generateImage(imageB({ width: 1440, height: 256 }))).resolves.toMatchObject({ images: [{ width: 1440, height: 256 }] });
  });

  it("retries a failed poll", async () => {
    h.fakes.imageB.failStatus(1, 502, { path: "/v1/get_result" });
    await expect(h.gateway.generateImage(imageB())).resolves.toMatchObject({ images: [{ width: 1024 }] });
  });

  it("times out when the task never becomes ready", async () => {
    h.fakes.imageB.pollsBeforeReady = 1_000_000;
    const err = await caught(() => h.gateway.generateImage(imageB()));
    expect({ code: err.code, status: err.status }).toEqual({ code: "upstream_timeout", status: 504 });
  });

  it("stops polling when the caller aborts", async () => {
    h.fakes.imageB.pollsBeforeReady = 1_000_000;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 60);
    expect((await caught(() => h.gateway.generateImage(imageB({ signal: controller.signal })))).code).toBe("upstream_error");
    // A poll already on the wire when the abort fired may still land: count after that, then no new poll may come.
    // (settle generously: on a loaded machine the fake, in this process, may record that last poll well after 50 ms)
    await new Promise((r) => setTimeout(r, 500));
    const polls = h.fakes.imageB.requests.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(h.fakes.imageB.requests.length).toBe(polls);
  });

  it("rejects a wrong-shaped submission answer", async () => {
    h.fakes.imageB.failNext(1, { kind: "wrong-shape" });
    expect((await caught(() => h.gateway.generateImage(imageB()))).code).toBe("upstream_error");
  });
});
