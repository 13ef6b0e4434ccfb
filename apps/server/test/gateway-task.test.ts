import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_MODELS, DEFAULT_PLANS } from "@gw/config";
import { lowBitrateMp3, pcmWav, taggedMp3, startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { authHeaders, balanceMicros, fundedUser, postJson, type FundedUser, readJson } from "./support/gateway-fixtures";

function audioForm(fields: Record<string, string>, audio?: Buffer, type = "audio/wav"): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (audio) form.append("audio", new Blob([audio], { type }), type === "audio/mpeg" ? "clip.mp3" : "clip.wav");
  return form;
}

describe("task and image endpoints: every modality, exact charges", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  let user: FundedUser;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    // A roomy free plan: this suite sends more than the default 20 requests per minute.
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 10_000, concurrentRequests: 50 } : p));
    server = await startTestServer({ env: { ...fakes.env, AUDIO_UPLOAD_LIMIT_BYTES: "200000" }, config: { plans } });
    user = await fundedUser(server, 20);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });
  beforeEach(() => fakes.clearAll());

  const charged = async (fn: () => Promise<Response>) => {
    const before = await balanceMicros(server, user.userId);
    const res = await fn();
    const body = await readJson(res);
    return { res, body, cost: before - (await balanceMicros(server, user.userId)) };
  };

  it("text task: task.completion with usage", async () => {
    const { res, body, cost } = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "textC-8x7b", messages: [{ role: "user", content: "hi there" }], max_tokens: 20 }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({
      object: "task.completion", model: "textC-8x7b",
      choices: [{ index: 0, message: { role: "assistant", content: "Echo: hi there" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
    });
    expect(typeof body.id).toBe("string");
    expect(Number.isInteger(body.created)).toBe(true);
    expect(cost).toBe(2 + 6);
    for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) expect(res.headers.get(h)).toMatch(/^\d+$/);
  });

  it("text task: usage the upstream reports above the held worst case is charged in full", async () => {
    fakes.textC.failNext(1, { kind: "status", status: 200, body: {
      id: "c1", object: "chat.completion", created: 1, model: "textC-8x7b",
      choices: [{ index: 0, message: { role: "assistant", content: "a very long answer" }, finish_reason: "length" }],
      usage: { prompt_tokens: 10, completion_tokens: 1801, total_tokens: 1811 },
    } });
    const { res, body, cost } = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "textC-8x7b", messages: [{ role: "user", content: "hi" }], max_tokens: 50 }));
    expect(res.status).toBe(200);
    expect(body.usage).toEqual({ prompt_tokens: 10, completion_tokens: 1801, total_tokens: 1811 });
    expect(cost).toBe(10 + 2 * 1801);
    expect(res.headers.get("x-request-cost")).toBe("0.003612");
  });

  it("text task: an OpenAI refusal (content null) is answered as the message's refusal, charged like any answer", async () => {
    fakes.textC.failNext(1, { kind: "status", status: 200, body: {
      id: "c2", object: "chat.completion", created: 1, model: "textC-8x7b",
      choices: [{ index: 0, message: { role: "assistant", content: null, refusal: "I can't help with that." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 },
    } });
    const { res, body, cost } = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "textC-8x7b", messages: [{ role: "user", content: "hi" }], max_tokens: 50 }));
    expect(res.status).toBe(200);
    expect(body.choices[0].message).toEqual({ role: "assistant", content: "", refusal: "I can't help with that." });
    expect(cost).toBe(10 + 2 * 7);
  });

  it("text task stream: task.completion.chunk events", async () => {
    const res = await postJson(server, "/api/v1/task", user.key, { model: "textA-4", messages: [{ role: "user", content: "a b" }], stream: true, max_tokens: 10 });
    const events = (await res.text()).trim().split("\n\n").map((e) => e.replace(/^data: /, ""));
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.every((c: { object: string }) => c.object === "task.completion.chunk")).toBe(true);
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
  });

  it("answers under /api/v1 carry Cache-Control: no-store (docs/api.md), a stream's and a refusal's too; /v1 streams are never stored either", async () => {
    const messages = [{ role: "user", content: "a b" }];
    const answers = [
      await postJson(server, "/api/v1/task", user.key, { model: "textA-4", messages, max_tokens: 10 }),
      await postJson(server, "/api/v1/task", user.key, { model: "textA-4", messages, max_tokens: 10, stream: true }),
      await postJson(server, "/API/V1/task/", user.key, { model: "nope", messages }),
      await postJson(server, "/api/v1/task", "ak-live-unknown", { model: "textA-4", messages }),
      await fetch(`${server.url}/api/v1/models`, { headers: authHeaders(user.key) }),
      await fetch(`${server.url}/api/v1/models/textA-4`, { headers: authHeaders(user.key) }),
      await fetch(`${server.url}/api/v1/nothing-here`, { headers: authHeaders(user.key) }),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 400, 401, 200, 200, 404]);
    for (const res of answers) {
      await res.text();
      expect(res.headers.get("cache-control")).toMatch(/^no-store\b/);
    }
    const stream = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages, max_tokens: 10, stream: true });
    await stream.text();
    expect(stream.headers.get("cache-control")).toBe("no-store, no-transform");
  });

  it("image task: one image at the standard price", async () => {
    const { res, body, cost } = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "imageB-1-schnell", prompt: "a red fox in snow", width: 1024, height: 768 }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ object: "image.generation", model: "imageB-1-schnell" });
    expect(body.data).toHaveLength(1);
    expect(body.data[0].url).toMatch(/^http/);
    // SPEC 2.6: base64 image data (the fake serves a PNG at the sample URL)
    expect(Buffer.from(body.data[0].b64_json, "base64").subarray(1, 4).toString()).toBe("PNG");
    expect(cost).toBe(100_000);
    expect(res.headers.get("x-request-cost")).toBe("0.100000");
  });

  it("Idempotency-Key: a `stream` flag a model ignores (image, speech, imageB.1) leaves a JSON answer, replayed; a text stream is replayed as a stream; each charged once", async () => {
    const key = { "idempotency-key": `ignored-stream-${Date.now()}` };
    const calls = [
      { path: "/api/v1/task", body: { model: "imageB-1-dev", prompt: "a lighthouse at dusk", stream: true }, upstream: () => fakes.imageB.requests.filter((r) => r.method === "POST").length },
      { path: "/api/v1/imageB.1", body: { prompt: "a lighthouse at dawn", stream: true }, upstream: () => fakes.imageB.requests.filter((r) => r.method === "POST").length },
      { path: "/api/v1/task", body: { model: "speechvendor-tts", text: "hello there", voice: "Rachel", stream: true }, upstream: () => fakes.speech.requests.filter((r) => r.path.startsWith("/v1/text-to-speech/")).length },
    ];
    for (const [i, call] of calls.entries()) {
      fakes.clearAll();
      const headers = { "idempotency-key": `${key["idempotency-key"]}-${i}` };
      const first = await charged(() => postJson(server, call.path, user.key, call.body, headers));
      expect(first.res.status).toBe(200);
      expect(first.cost).toBeGreaterThan(0);
      const again = await charged(() => postJson(server, call.path, user.key, call.body, headers));
      expect(again.res.status).toBe(200);
      expect(again.res.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
      expect(again.cost).toBe(0);
      expect(call.upstream()).toBe(1);
    }
    // a text model's stream is stored as its events: the repeat replays them, charged once
    const text = { model: "textA-4", messages: [{ role: "user", content: "a b" }], stream: true, max_tokens: 10 };
    fakes.clearAll();
    const before = await balanceMicros(server, user.userId);
    const streamed = await postJson(server, "/api/v1/task", user.key, text, key);
    expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await streamed.text();
    const after = await balanceMicros(server, user.userId);
    expect(after).toBeLessThan(before);
    const replayed = await postJson(server, "/api/v1/task", user.key, text, key);
    expect(replayed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(await replayed.text()).toBe(events);
    expect(await balanceMicros(server, user.userId)).toBe(after);
    expect(fakes.textA.requests).toHaveLength(1);
  });

  it("image task above 1024x1024 costs the high-resolution price", async () => {
    const { res, cost } = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "imageB-1-pro", prompt: "mountains", width: 1440, height: 1024 }));
    expect(res.status).toBe(200);
    expect(cost).toBe(200_000);
  });

  /** A 502 upstream_error in the spec's nested shape that cost nothing. */
  const expectFreeUpstreamError = async (fn: () => Promise<Response>) => {
    const { res, body, cost } = await charged(fn);
    expect({ status: res.status, error: body.error, cost }).toEqual({
      status: 502, error: { message: expect.any(String), type: "api_error", code: "upstream_error" }, cost: 0,
    });
    return body.error.message as string;
  };

  it("image task: a sample download answering 200 with something that is not an image is 502 and costs nothing", async () => {
    const faults = [{ kind: "garbage" }, { kind: "wrong-shape" }, { kind: "status", status: 200, body: "<html>signed link expired</html>", headers: { "content-type": "image/png" } }] as const;
    for (const fault of faults) {
      fakes.imageB.failNext(1, fault, { path: "/samples/" });
      const message = await expectFreeUpstreamError(() => postJson(server, "/api/v1/task", user.key, { model: "imageB-1-dev", prompt: "a red fox in snow" }));
      expect(message).toMatch(/image/);
      expect(fakes.imageB.requests.filter((r) => r.path.startsWith("/samples/")).length).toBeGreaterThan(0);
      fakes.clearAll();
    }
  });

  it("image task: a sample URL that redirects is followed to the image (a few hops, http(s) only) and charged once", async () => {
    const redirect = (location: string) => ({ kind: "status", status: 302, body: "", headers: { location } }) as const;
    fakes.imageB.failNext(1, redirect("/samples/moved.png"), { path: "/samples/" });
    const { res, body, cost } = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "imageB-1-dev", prompt: "a red fox in snow" }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ object: "image.generation", model: "imageB-1-dev", data: [{ url: expect.stringMatching(/\/samples\/[\w-]+\.png$/) }] });
    expect(Buffer.from(body.data[0].b64_json as string, "base64").subarray(1, 4).toString("latin1")).toBe("PNG");
    expect(cost).toBe(100_000);
    expect(fakes.imageB.requests.filter((r) => r.path.startsWith("/samples/")).map((r) => r.path).at(-1)).toBe("/samples/moved.png");
    fakes.clearAll();
    // endless redirects and a redirect out of http(s) still fail, at no cost
    fakes.imageB.failNext(20, redirect("/samples/again.png"), { path: "/samples/" });
    expect(await expectFreeUpstreamError(() => postJson(server, "/api/v1/task", user.key, { model: "imageB-1-dev", prompt: "a red fox in snow" }))).toMatch(/HTTP 302/);
    expect(fakes.imageB.requests.filter((r) => r.path.startsWith("/samples/"))).toHaveLength(6);
    fakes.clearAll();
    fakes.imageB.failNext(1, redirect("file:///etc/passwd"), { path: "/samples/" });
    expect(await expectFreeUpstreamError(() => postJson(server, "/api/v1/task", user.key, { model: "imageB-1-dev", prompt: "a red fox in snow" }))).toMatch(/HTTP 302/);
  });

  it("a Ready poll whose sample is not an http(s) URL is 502 and costs nothing, on both imageB paths", async () => {
    for (const sample of ["not a url", "ftp://files.example/x.png", "javascript:alert(1)"]) {
      const ready = { kind: "status", status: 200, body: { id: "x", status: "Ready", result: { sample } } } as const;
      fakes.imageB.failNext(1, ready, { path: "/v1/get_result" });
      await expectFreeUpstreamError(() => postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a castle" }));
      fakes.imageB.failNext(1, ready, { path: "/v1/get_result" });
      await expectFreeUpstreamError(() => postJson(server, "/api/v1/task", user.key, { model: "imageB-1-dev", prompt: "a castle" }));
      // the task path must fail on the URL itself, never by trying to download it
      expect(fakes.imageB.requests.filter((r) => r.path.startsWith("/samples/"))).toHaveLength(0);
    }
  });

  it("a Flux status the gateway does not know fails fast: 502, no charge, no polling until the timeout", async () => {
    fakes.imageB.finalStatus = "Weird";
    const started = Date.now();
    const message = await expectFreeUpstreamError(() => postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a castle" }));
    expect(message).toMatch(/Weird/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(fakes.imageB.requests.filter((r) => r.path === "/v1/get_result")).toHaveLength(2);
  });

  it("task: image models of another protocol (imageA) are 400 unsupported_model, cost nothing, never sent", async () => {
    const { res, body, cost } = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "imageA", prompt: "a red fox" }));
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({ code: "unsupported_model", type: "invalid_request_error", message: expect.stringContaining("'imageA'") });
    expect(cost).toBe(0);
    expect(fakes.imageA.requests).toHaveLength(0);
  });

  it("text-to-speech: speech.generation, $0.015 per 1000 characters", async () => {
    const text = "Hello from the gateway"; // 22 characters
    const { res, body, cost } = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text, voice: "Rachel", voice_settings: { stability: 0.5, similarity_boost: 0.7 } }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ object: "speech.generation", model: "speechvendor-tts" });
    expect(Buffer.from(body.audio.b64_json, "base64").toString()).toContain(text);
    expect(body.audio.url).toMatch(/^data:audio\//);
    expect(cost).toBe(Math.ceil((22 * 15_000) / 1000));
  });

  it("text-to-speech: the 10,000-character limit counts characters as billing does (an emoji is one), not UTF-16 units", async () => {
    const emoji = "\u{1F44D}".repeat(10_000); // 10,000 characters, 20,000 UTF-16 units
    const { res, cost } = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text: emoji, voice: "Rachel" }));
    expect(res.status).toBe(200);
    expect(cost).toBe(Math.ceil((10_000 * 15_000) / 1000));
    const over = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text: `${emoji}a`, voice: "Rachel" }));
    expect(over.res.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: "invalid_parameter", message: "Invalid parameter 'text': must have at most 10000 characters." });
    expect(over.cost).toBe(0);
  });

  it("speech-to-text (multipart): transcription billed per started second", async () => {
    const audio = Buffer.alloc(40_000, 1); // the fake reads 16,000 bytes per second: 2.5 s -> 3 s
    const { res, body, cost } = await charged(() => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-stt" }, audio) }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ object: "transcription", model: "speechvendor-stt", duration_seconds: 2.5 });
    expect(typeof body.text).toBe("string");
    expect(cost).toBe(3 * 100);
  });

  it("speech-to-text: the upstream's duration is billed in full, also above the hold", async () => {
    // 4,000 bytes with no container: held as 2 s (size estimate); the upstream reports 61.3 s -> 62 started seconds.
    fakes.speech.failNext(1, { kind: "status", status: 200, body: { text: "a long quiet recording", audio_duration_secs: 61.3 } });
    const { res, body, cost } = await charged(() => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-stt" }, Buffer.alloc(4_000, 3)) }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ object: "transcription", text: "a long quiet recording", duration_seconds: 61.3 });
    expect(cost).toBe(62 * 100);
    expect(res.headers.get("x-request-cost")).toBe("0.006200");
  });

  it("speech-to-text: the hold covers the duration the file's container declares, not a guess from its size", async () => {
    // 61 s of 8 kbit/s MP3 in 61 KB: a size estimate would hold 31 s ($0.0031); the declared 61.06 s hold 62 + 1 s.
    const poor = await fundedUser(server, 0.005);
    const res = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(poor.key, false), body: audioForm({ model: "speechvendor-stt" }, lowBitrateMp3(61), "audio/mpeg") });
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({ error: expect.objectContaining({ code: "insufficient_credits", current_balance: 0.005, required_amount: 0.0063 }) });
    expect(await balanceMicros(server, poor.userId)).toBe(5_000);
    expect(fakes.speech.lastRequest()).toBeUndefined();
  });

  it("speech-to-text: when the upstream reports no duration, the declared one is billed and returned", async () => {
    fakes.speech.failNext(1, { kind: "status", status: 200, body: { text: "", words: [] } });
    const { res, body, cost } = await charged(() => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-stt" }, lowBitrateMp3(10), "audio/mpeg") }));
    expect(res.status).toBe(200);
    expect(body.duration_seconds).toBeCloseTo(10.008, 3); // 139 frames of 72 ms
    expect(cost).toBe(11 * 100);
  });

  it("speech-to-text: audio that plays on after the last word is billed for its whole length, not to the last word", async () => {
    fakes.speech.failNext(1, { kind: "status", status: 200, body: { language_code: "en", text: "Yes.", words: [{ text: "Yes.", start: 0.5, end: 1.2, type: "word" }] } });
    const { res, body, cost } = await charged(() => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-stt" }, lowBitrateMp3(10), "audio/mpeg") }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ object: "transcription", text: "Yes." });
    expect(body.duration_seconds).toBeCloseTo(10.008, 3);
    expect(cost).toBe(11 * 100);
  });

  it("speech-to-speech (multipart with voice_settings as JSON): billed by the minute of audio, the only price it lists", async () => {
    const audio = Buffer.alloc(16_000, 2);
    const { res, body, cost } = await charged(() => fetch(`${server.url}/api/v1/task`, {
      method: "POST", headers: authHeaders(user.key, false),
      body: audioForm({ model: "speechvendor-sts", voice: "Adam", voice_settings: JSON.stringify({ stability: 0.3, similarity_boost: 0.9 }) }, audio),
    }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ object: "speech.generation", model: "speechvendor-sts" });
    expect(typeof body.audio.b64_json).toBe("string");
    // no header declares a duration: 2,000 bytes per second, at the listed price per minute and nothing else
    expect(cost).toBe(8 * 100);
    expect(res.headers.get("x-request-cost")).toBe("0.000800");
    const listed = await readJson(await fetch(`${server.url}/v1/models/speechvendor-sts`, { headers: authHeaders(user.key, false) }));
    expect(listed.pricing).toEqual({ per_minute: 0.006 });
  });

  it("speech: the duration is read from the file itself, whatever type the client declared for it", async () => {
    // A 5 s WAV labelled audio/mpeg (or MP4): its own header says 5 s. Trusting the label made the container unreadable,
    // so STS billed a size estimate (160 KB at 2,000 bytes per second: 81 s) and STT the end of the last word (2 s).
    const wav = pcmWav(5);
    fakes.speech.failNext(1, { kind: "status", status: 200, body: { language_code: "en", text: "Yes.", words: [{ text: "Yes.", start: 0.5, end: 1.2, type: "word" }] } });
    const stt = await charged(() => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-stt" }, wav, "audio/mpeg") }));
    expect(stt.res.status).toBe(200);
    expect(stt.body.duration_seconds).toBe(5);
    expect(stt.cost).toBe(5 * 100);
    const sts = await charged(() => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-sts", voice: "Adam" }, wav, "audio/mp4") }));
    expect(sts.res.status).toBe(200);
    expect(sts.cost).toBe(5 * 100);
    expect(sts.res.headers.get("x-request-cost")).toBe("0.000500");
  });

  it("speech-to-text: a transcript running past the length the header declares is billed to its last word", async () => {
    // 5 s of audio whose header claims 1 s (a truncated or forged size): the words prove at least 4.6 s were transcribed.
    const wav = pcmWav(5);
    wav.writeUInt32LE(32_000, 40);
    fakes.speech.failNext(1, { kind: "status", status: 200, body: { language_code: "en", text: "one two", words: [{ text: "one", start: 0.2, end: 0.6, type: "word" }, { text: "two", start: 4.1, end: 4.6, type: "word" }] } });
    const { res, body, cost } = await charged(() => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-stt" }, wav) }));
    expect(res.status).toBe(200);
    expect(body.duration_seconds).toBe(4.6);
    expect(cost).toBe(5 * 100);
  });

  it("speech: a header declaring more audio than the file's bytes hold is billed for what they hold (MP3 frames, WAV samples)", async () => {
    // 42 KB: a Xing frame claiming 10,000 frames (261 s, held and billed as 262 s) before 100 frames of 128 kbit/s
    // MP3: 101 frames play 2.64 s, so 4 s are held and 3 s billed.
    const forged = taggedMp3(100, 10_000);
    const poor = await fundedUser(server, 0.001);
    fakes.speech.failNext(1, { kind: "status", status: 200, body: { language_code: "en", text: "", words: [] } });
    const stt = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(poor.key, false), body: audioForm({ model: "speechvendor-stt" }, forged, "audio/mpeg") });
    expect(stt.status).toBe(200);
    expect((await readJson(stt)).duration_seconds).toBeCloseTo(2.638, 3);
    expect(stt.headers.get("x-request-cost")).toBe("0.000300");
    expect(await balanceMicros(server, poor.userId)).toBe(1_000 - 300);
    const sts = await charged(() => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-sts", voice: "Adam" }, forged, "audio/mpeg") }));
    expect(sts.res.status).toBe(200);
    expect(sts.cost).toBe(3 * 100);
    expect(sts.res.headers.get("x-request-cost")).toBe("0.000300");
    // a 2.5 s PCM WAV whose fact chunk declares 1,000 s of samples: its 80,012 bytes after the headers play 2.5 s
    const wav = await charged(() => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-sts", voice: "Adam" }, pcmWav(2.5, 16_000_000)) }));
    expect(wav.res.status).toBe(200);
    expect(wav.cost).toBe(3 * 100);
    expect(wav.res.headers.get("x-request-cost")).toBe("0.000300");
  });

  it("speech-to-text: audio whose length nothing tells is billed the minimum second, and duration_seconds says 1", async () => {
    fakes.speech.failNext(1, { kind: "status", status: 200, body: { language_code: "en", text: "", words: [] } });
    const { res, body, cost } = await charged(() => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-stt" }, Buffer.alloc(6_000, 1)) }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ object: "transcription", text: "", duration_seconds: 1 });
    expect(cost).toBe(100);
    expect(res.headers.get("x-request-cost")).toBe("0.000100");
  });

  it("Idempotency-Key: a multipart text task streamed by `stream` written with spaces (\" true\") is replayed, charged once", async () => {
    const fields = { model: "textA-4", messages: JSON.stringify([{ role: "user", content: "a b" }]), max_tokens: "10", stream: " true" };
    const key = `mp-stream-ws-${Date.now()}`;
    const send = () => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { ...authHeaders(user.key, false), "idempotency-key": key }, body: audioForm(fields) });
    const first = await send();
    expect(first.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await first.text();
    const after = await balanceMicros(server, user.userId);
    const again = await send();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(events);
    expect(await balanceMicros(server, user.userId)).toBe(after);
    expect(fakes.textA.requests).toHaveLength(1);
  });

  it("multipart works for every model: JSON-encoded messages, numbers and booleans as text, a bad one named", async () => {
    const post = (fields: Record<string, string>) => fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm(fields) });
    const text = await charged(() => post({ model: "textC-8x7b", messages: JSON.stringify([{ role: "user", content: "hi there" }]), max_tokens: "20", temperature: "0.5", stream: "false" }));
    expect(text.res.status).toBe(200);
    expect(text.body).toMatchObject({ object: "task.completion", choices: [{ message: { content: "Echo: hi there" } }], usage: { prompt_tokens: 2, completion_tokens: 3 } });
    expect(fakes.textC.lastRequest()?.json).toMatchObject({ max_tokens: 20, temperature: 0.5 });
    expect(text.cost).toBe(2 + 6);

    const image = await charged(() => post({ model: "imageB-1-schnell", prompt: "a lighthouse at dawn", width: "512", height: "768", seed: "42" }));
    expect(image.res.status).toBe(200);
    expect(image.body).toMatchObject({ object: "image.generation", model: "imageB-1-schnell" });
    expect([...fakes.imageB.tasks.values()][0]).toMatchObject({ width: 512, height: 768, seed: 42 });

    const before = await balanceMicros(server, user.userId);
    const bad = await post({ model: "textC-8x7b", messages: JSON.stringify([{ role: "user", content: "hi" }]), max_tokens: "lots" });
    expect(bad.status).toBe(400);
    expect((await readJson(bad)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'max_tokens'") });
    const badJson = await post({ model: "textC-8x7b", messages: "[{not json" });
    expect(badJson.status).toBe(400);
    expect((await readJson(badJson)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'messages'") });
    expect(await balanceMicros(server, user.userId)).toBe(before);
  });

  it("imageA: num_outputs images at $0.10 each, SPEC 4.2 shape", async () => {
    const { res, body, cost } = await charged(() => postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a lighthouse", num_outputs: 2, style: "scenic" }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ status: "success", prompt: "a lighthouse", model: "5" });
    expect(body.images).toHaveLength(2);
    expect(body.images[0]).toEqual({ url: expect.any(String), id: expect.any(String), created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(cost).toBe(200_000);
    // version 5 (the default) sends the model's upstream name: the id, as no upstreamModel is configured
    expect(fakes.imageA.lastRequest()?.json).toMatchObject({ model: "imageA", n: 2, size: "512x512" });
  });

  it("imageA: OpenAI's safety-system refusal is 400 content_policy_violation with its message as one sentence, and costs nothing", async () => {
    const before = await balanceMicros(server, user.userId);
    // OpenAI's own wording and error body for a refused image prompt (its message ends with a full stop)
    fakes.imageA.failNext(1, { kind: "status", status: 400, body: { error: {
      message: "Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.",
      type: "invalid_request_error", param: null, code: "content_policy_violation",
    } } });
    const res = await postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a lighthouse" });
    expect(res.status).toBe(400);
    expect(await readJson(res)).toEqual({ error: {
      message: "The image provider refused the prompt: Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.",
      type: "invalid_request_error", code: "content_policy_violation",
    } });
    expect(await balanceMicros(server, user.userId)).toBe(before);
  });

  it("imageA: an image answered as data is a data: URL of its own type (JPEG is not labelled image/png)", async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0xff, 0xd9]).toString("base64");
    fakes.imageA.failNext(1, { kind: "status", status: 200, body: { created: 1, data: [{ b64_json: jpeg }] } });
    const res = await postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a lighthouse" });
    expect(res.status).toBe(200);
    expect((await readJson(res)).images[0].url).toBe(`data:image/jpeg;base64,${jpeg}`);
  });

  it("imageA: an image whose url is not an http(s) URL is 502 and costs nothing", async () => {
    for (const url of ["javascript:alert(1)", "", "not a url", "file:///etc/passwd"]) {
      fakes.imageA.failNext(1, { kind: "status", status: 200, body: { created: 1, data: [{ url }] } });
      const message = await expectFreeUpstreamError(() => postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a lighthouse" }));
      expect(message).toMatch(/image/);
    }
  });

  it("imageA: an unknown version is 400 invalid_parameter naming 'model' and the known versions, costs nothing, never sent", async () => {
    for (const model of ["6", "banana"]) {
      const { res, body, cost } = await charged(() => postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a lighthouse", model }));
      expect(res.status).toBe(400);
      expect(body).toEqual({ error: { message: "Invalid parameter 'model': must be one of the versions \"5\".", type: "invalid_request_error", code: "invalid_parameter" } });
      expect(cost).toBe(0);
    }
    expect(fakes.imageA.requests).toHaveLength(0);
  });

  describe("imageA versions added in the models config file", () => {
    let dir: string;
    let configured: TestServer;
    let owner: FundedUser;

    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), "gw-models-"));
      const models = DEFAULT_MODELS.map((m) => (m.id === "imageA" ? { ...m, versions: { "5": "image-model-5", "6": "image-model-6" } } : m));
      writeFileSync(path.join(dir, "models.json"), JSON.stringify({ models }));
      configured = await startTestServer({ env: { ...fakes.env, CONFIG_FILE: path.join(dir, "models.json") } });
      owner = await fundedUser(configured, 5);
    });
    afterAll(async () => {
      await configured.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("each version sends its own upstream model name and is reported back as `model`", async () => {
      const cases: Array<[Record<string, string>, string, string]> = [[{}, "5", "image-model-5"], [{ model: "5" }, "5", "image-model-5"], [{ model: "6" }, "6", "image-model-6"]];
      for (const [extra, version, upstream] of cases) {
        const res = await postJson(configured, "/api/v1/imageA/generate", owner.key, { prompt: "a lighthouse", ...extra });
        expect(res.status).toBe(200);
        expect((await readJson(res)).model).toBe(version);
        expect(fakes.imageA.lastRequest()?.json).toMatchObject({ model: upstream });
      }
      const before = await balanceMicros(configured, owner.userId);
      const unknown = await postJson(configured, "/api/v1/imageA/generate", owner.key, { prompt: "a lighthouse", model: "7" });
      expect(unknown.status).toBe(400);
      expect(await readJson(unknown)).toEqual({ error: { message: "Invalid parameter 'model': must be one of the versions \"5\", \"6\".", type: "invalid_request_error", code: "invalid_parameter" } });
      expect(await balanceMicros(configured, owner.userId)).toBe(before);
      expect(fakes.imageA.requests).toHaveLength(3);
    });
  });

  it("imageB.1: defaults (30 steps, 1:1 = 1024x1024) and 16:9 at about one megapixel", async () => {
    const { res, body, cost } = await charged(() => postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a castle", seed: 42 }));
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ status: "complete", prompt: "a castle", model: "imageB-1-dev", seed: 42, images: [{ url: expect.any(String), width: 1024, height: 1024 }] });
    expect(typeof body.id).toBe("string");
    expect(cost).toBe(100_000);
    const wide = await postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a beach", aspect_ratio: "16:9", steps: 50 });
    const wideBody = await readJson(wide);
    expect(wideBody.images[0].width / wideBody.images[0].height).toBeCloseTo(16 / 9, 1);
    expect(wideBody.images[0].width * wideBody.images[0].height).toBeLessThanOrEqual(1024 * 1024);
  });

  it("null for an optional field is its default on every image route, as it already was for seed, style and the text fields", async () => {
    const a = await charged(() => postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a lighthouse", width: null, height: null, model: null, num_outputs: null, style: null }));
    expect(a.res.status).toBe(200);
    expect(a.body).toMatchObject({ status: "success", model: "5", images: [{ url: expect.any(String) }] });
    expect(a.cost).toBe(100_000);
    expect(fakes.imageA.lastRequest()?.json).toMatchObject({ model: "imageA", n: 1, size: "512x512" });

    const b = await charged(() => postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a castle", steps: null, aspect_ratio: null, model: null, seed: null, negative_prompt: null, style: null }));
    expect(b.res.status).toBe(200);
    expect(b.body).toMatchObject({ status: "complete", model: "imageB-1-dev", images: [{ width: 1024, height: 1024 }] });
    expect(b.cost).toBe(100_000);
    const submitted = fakes.imageB.requests.filter((r) => r.method === "POST").at(-1);
    expect(submitted?.path).toBe("/v1/imageB-1-dev");
    expect(submitted?.json).toMatchObject({ width: 1024, height: 1024, steps: 30 });

    const t = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "imageB-1-schnell", prompt: "a castle", width: null, height: null, num_inference_steps: null, guidance_scale: null, seed: null }));
    expect(t.res.status).toBe(200);
    expect(t.body).toMatchObject({ object: "image.generation", model: "imageB-1-schnell" });
    expect(t.cost).toBe(100_000);
    expect(fakes.imageB.requests.filter((r) => r.method === "POST").at(-1)?.json).toMatchObject({ width: 1024, height: 1024 });
  });

  it("imageB.1: extreme ratios, also written in pixels (1920:1080), stay within Flux's sides (256..1440, multiples of 32) at the standard price", async () => {
    for (const [ratio, w, h] of [["4:1", 4, 1], ["1:4", 1, 4], ["21:9", 21, 9], ["3:1", 3, 1], ["1:3", 1, 3], ["2:1", 2, 1], ["16:9", 16, 9], ["9:16", 9, 16], ["3:2", 3, 2], ["1920:1080", 16, 9], ["100:100", 1, 1]] as const) {
      const { res, body, cost } = await charged(() => postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a wide landscape", aspect_ratio: ratio }));
      expect({ ratio, status: res.status }).toEqual({ ratio, status: 200 });
      const { width, height } = body.images[0];
      for (const side of [width, height]) {
        expect(side % 32).toBe(0);
        expect(side).toBeGreaterThanOrEqual(256);
        expect(side).toBeLessThanOrEqual(1440);
      }
      expect(Math.abs(Math.log(width / height / (w / h)))).toBeLessThan(0.03);
      expect(width * height).toBeLessThanOrEqual(1024 * 1024);
      expect([...fakes.imageB.tasks.values()].at(-1)).toMatchObject({ width, height });
      expect(cost).toBe(100_000);
    }
  });

  it("bad input: 400 naming the parameter, nothing charged, upstream never called", async () => {
    const before = await balanceMicros(server, user.userId);
    const cases: Array<[string, unknown, string, RegExp]> = [
      ["/api/v1/task", { messages: [{ role: "user", content: "x" }] }, "missing_required_parameter", /'model'/],
      ["/api/v1/task", { model: "gpt-99", messages: [] }, "unsupported_model", /gpt-99/],
      ["/api/v1/task", { model: "textA-4", messages: [] }, "invalid_parameter", /'messages'/],
      ["/api/v1/task", { model: "textA-4", messages: [{ role: "user", content: "x" }], temperature: 2.5 }, "invalid_parameter", /'temperature'/],
      ["/api/v1/task", { model: "textA-4", messages: [{ role: "user", content: "x" }], temperature: "hot" }, "invalid_parameter", /'temperature'/],
      ["/api/v1/task", { model: "textA-4", messages: [{ role: "robot", content: "x" }] }, "invalid_parameter", /'messages\[0\]\.role'/],
      ["/api/v1/task", { model: "textA-4", messages: [{ role: "user", content: "x" }], max_tokens: 999999 }, "invalid_parameter", /'max_tokens'/],
      ["/api/v1/task", { model: "textA-4", messages: [{ role: "user", content: "x\u0000" }] }, "invalid_parameter", /content/],
      ["/api/v1/task", { model: "imageB-1-dev" }, "missing_required_parameter", /'prompt'/],
      ["/api/v1/task", { model: "speechvendor-tts", text: "hello" }, "missing_required_parameter", /'voice'/],
      ["/api/v1/task", { model: "speechvendor-stt", audio: "UklGRg==" }, "missing_required_parameter", /'audio' \(send it as a file part of a multipart\/form-data request\)/],
      ["/api/v1/imageA/generate", { prompt: "cat", num_outputs: 5 }, "invalid_parameter", /'num_outputs'/],
      ["/api/v1/imageB.1", { prompt: "cat", steps: 51 }, "invalid_parameter", /'steps'/],
      ["/api/v1/imageB.1", { prompt: "cat", aspect_ratio: "wide" }, "invalid_parameter", /'aspect_ratio'/],
      ["/api/v1/imageB.1", { prompt: "cat", aspect_ratio: "10:1" }, "invalid_parameter", /'aspect_ratio'/],
      ["/api/v1/imageB.1", { prompt: "cat", aspect_ratio: "10000:10000" }, "invalid_parameter", /'aspect_ratio'/],
      ["/v1/chat/completions", { model: "textA-4", messages: "hi" }, "invalid_parameter", /'messages'/],
    ];
    for (const [path, body, code, message] of cases) {
      const res = await postJson(server, path, user.key, body);
      const json = await readJson(res);
      expect({ path, body, status: res.status, code: json.error?.code }).toEqual({ path, body, status: 400, code });
      expect(json.error.message).toMatch(message);
      expect(json.error.type).toBe("invalid_request_error");
    }
    expect(await balanceMicros(server, user.userId)).toBe(before);
    expect(fakes.textA.requests).toHaveLength(0);
  });

  it.each([
    ["zero-width spaces", "\u200b\u200b"],
    ["a word joiner and a BOM", "\u2060\ufeff"],
    ["Hangul fillers", "\u3164\u115f"],
    ["a Braille blank and no-break spaces", "\u2800\u00a0\u202f"],
    ["variation selectors and a combining grapheme joiner", "\ufe0f\u034f\u180b"],
  ])("a prompt or speech text of only %s is 400 invalid_parameter 'must not be empty', costs nothing, never sent", async (_label, blank) => {
    const before = await balanceMicros(server, user.userId);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["/api/v1/imageA/generate", { prompt: blank }, "prompt"],
      ["/api/v1/imageB.1", { prompt: blank }, "prompt"],
      ["/api/v1/task", { model: "imageB-1-dev", prompt: blank }, "prompt"],
      ["/api/v1/task", { model: "speechvendor-tts", text: blank, voice: "Rachel" }, "text"],
    ];
    for (const [path, body, param] of cases) {
      const res = await postJson(server, path, user.key, body);
      expect({ path, status: res.status, body: await readJson(res) }).toEqual({
        path, status: 400,
        body: { error: { message: `Invalid parameter '${param}': must not be empty.`, type: "invalid_request_error", code: "invalid_parameter" } },
      });
    }
    expect(await balanceMicros(server, user.userId)).toBe(before);
    expect(fakes.imageA.requests).toHaveLength(0);
    expect(fakes.imageB.requests).toHaveLength(0);
    expect(fakes.speech.requests.filter((r) => r.path.startsWith("/v1/text-to-speech/"))).toHaveLength(0);
  });

  it("unknown voice is 400 invalid_parameter and costs nothing", async () => {
    const before = await balanceMicros(server, user.userId);
    const res = await postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text: "hello", voice: "Nobody" });
    expect(res.status).toBe(400);
    expect((await readJson(res)).error.code).toBe("invalid_parameter");
    expect(await balanceMicros(server, user.userId)).toBe(before);
  });

  it("unknown voice is 400 naming 'voice' even for an account that could not pay (checked before the hold, not hidden by a 402)", async () => {
    const broke = await fundedUser(server, 0);
    const tts = await postJson(server, "/api/v1/task", broke.key, { model: "speechvendor-tts", text: "hello", voice: "Nobody" });
    expect(tts.status).toBe(400);
    expect((await readJson(tts)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'voice'") });
    const form = new FormData();
    form.append("model", "speechvendor-sts");
    form.append("voice", "Nobody");
    form.append("audio", new Blob([Buffer.alloc(4_000, 1)], { type: "audio/mpeg" }), "a.mp3");
    const sts = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { authorization: `Bearer ${broke.key}` }, body: form });
    expect(sts.status).toBe(400);
    expect((await readJson(sts)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'voice'") });
    // a known voice on the same account is the 402 it always was
    expect((await postJson(server, "/api/v1/task", broke.key, { model: "speechvendor-tts", text: "hello", voice: "Rachel" })).status).toBe(402);
  });

  it("an ElevenLabs 422 (FastAPI's detail list) is 400 invalid_parameter naming the field it refused, and costs nothing", async () => {
    const detail = [{ type: "string_too_long", loc: ["body", "text"], msg: "String should have at most 5000 characters", input: "…" }];
    fakes.speech.failNext(1, { kind: "status", status: 422, body: { detail } }, { path: "/v1/text-to-speech/" });
    const { res, body, cost } = await charged(() => postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text: "hello", voice: "Rachel" }));
    expect(res.status).toBe(400);
    expect(body).toEqual({ error: {
      message: "The upstream provider rejected the request: text: String should have at most 5000 characters.",
      type: "invalid_request_error", code: "invalid_parameter",
    } });
    expect(cost).toBe(0);
  });

  it("multipart without the audio file: 400 missing audio; over the upload limit: 413", async () => {
    const noFile = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-stt" }) });
    expect(noFile.status).toBe(400);
    expect((await readJson(noFile)).error).toMatchObject({ code: "missing_required_parameter", message: expect.stringContaining("'audio'") });
    const big = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-stt" }, Buffer.alloc(300_000)) });
    expect(big.status).toBe(413);
    expect((await readJson(big)).error).toMatchObject({ code: "payload_too_large", message: "The audio file is larger than 200000 bytes." });
  });

  it("multipart: a field over the 1 MB body limit is 413 like the same JSON body, and costs nothing", async () => {
    const before = await balanceMicros(server, user.userId);
    const messages = JSON.stringify([{ role: "user", content: "x".repeat(1_100_000) }]);
    const res = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "textA-4", messages }) });
    expect(res.status).toBe(413);
    expect((await readJson(res)).error).toMatchObject({ code: "payload_too_large", type: "invalid_request_error", message: expect.stringContaining("'messages'") });
    expect(await balanceMicros(server, user.userId)).toBe(before);
    expect(fakes.textA.requests).toHaveLength(0);
  });

  it("multipart: a field with a bracketed name (messages[4294967294][role]) or sent twice is 400 naming it at once, costs nothing, never sent", async () => {
    const before = await balanceMicros(server, user.userId);
    const post = (form: FormData, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { ...authHeaders(user.key, false), ...headers }, body: form, signal: AbortSignal.timeout(5_000) });
    // read by multer as a sparse array of four billion slots: walking it blocked the server for minutes
    const sparse = audioForm({ model: "textA-4", "messages[4294967294][role]": "user", "messages[4294967294][content]": "hi" });
    const started = Date.now();
    const headerSets: Array<Record<string, string>> = [{}, { "idempotency-key": `sparse-${Date.now()}` }];
    for (const headers of headerSets) {
      const res = await post(sparse, headers);
      expect(res.status).toBe(400);
      expect((await readJson(res)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'messages'") });
    }
    expect(Date.now() - started).toBeLessThan(2_000);
    const twice = audioForm({ model: "imageB-1-dev", prompt: "a lighthouse" });
    twice.append("prompt", "a harbour");
    const res = await post(twice);
    expect(res.status).toBe(400);
    expect((await readJson(res)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'prompt'") });
    expect(fakes.textA.requests).toHaveLength(0);
    expect(fakes.imageB.requests).toHaveLength(0);
    expect(await balanceMicros(server, user.userId)).toBe(before);
  });

  it("multipart: a text field whose bytes are not UTF-8 is 400 naming it (CONTRACT 7b), costs nothing, never sent", async () => {
    const before = await balanceMicros(server, user.userId);
    const field = (name: string, value: Buffer | string) =>
      Buffer.concat([Buffer.from(`--b0undary\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`), Buffer.from(value), Buffer.from("\r\n")]);
    const form = (text: Buffer | string) => Buffer.concat([field("model", "speechvendor-tts"), field("voice", "Rachel"), field("text", text), Buffer.from("--b0undary--\r\n")]);
    const send = (body: Buffer) => fetch(`${server.url}/api/v1/task`, {
      method: "POST", headers: { ...authHeaders(user.key, false), "content-type": "multipart/form-data; boundary=b0undary" }, body,
    });
    const res = await send(form(Buffer.from([0x68, 0xff, 0xfe, 0x69])));
    expect(res.status).toBe(400);
    expect((await readJson(res)).error).toMatchObject({ code: "invalid_parameter", type: "invalid_request_error", message: expect.stringContaining("'text'") });
    expect(await balanceMicros(server, user.userId)).toBe(before);
    expect(fakes.speech.requests.filter((r) => r.method === "POST")).toHaveLength(0);
    // well-formed UTF-8 beyond ASCII still goes through
    const ok = await send(form("héllo ✓"));
    expect(ok.status).toBe(200);
  });

  it("multipart: audio sent as a text field (no filename, curl -F audio=<file) is 400 naming 'audio', asking for a file; costs nothing, never sent", async () => {
    const before = await balanceMicros(server, user.userId);
    const part = (name: string, value: Buffer) =>
      Buffer.concat([Buffer.from(`--b0undary\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`), value, Buffer.from("\r\n")]);
    for (const audio of [lowBitrateMp3(1), pcmWav(1), Buffer.from("RIFF plain text")]) {
      const res = await fetch(`${server.url}/api/v1/task`, {
        method: "POST", headers: { ...authHeaders(user.key, false), "content-type": "multipart/form-data; boundary=b0undary" },
        body: Buffer.concat([part("model", Buffer.from("speechvendor-stt")), part("audio", audio), Buffer.from("--b0undary--\r\n")]),
      });
      expect(res.status).toBe(400);
      expect((await readJson(res)).error).toMatchObject({
        code: "invalid_parameter", type: "invalid_request_error",
        message: "Invalid parameter 'audio': must be a file upload, a part with a filename (curl -F audio=@clip.wav), not a text field.",
      });
    }
    expect(await balanceMicros(server, user.userId)).toBe(before);
    expect(fakes.speech.requests.filter((r) => r.method === "POST")).toHaveLength(0);
  });

  it("an upload declared as something other than audio or video is 400 naming 'audio', costs nothing, never sent", async () => {
    const before = await balanceMicros(server, user.userId);
    for (const [model, type] of [["speechvendor-stt", "text/plain"], ["speechvendor-stt", "image/png"], ["speechvendor-sts", "application/json"]] as const) {
      const res = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model, voice: "Adam" }, Buffer.from("not audio at all"), type) });
      expect({ type, status: res.status }).toEqual({ type, status: 400 });
      expect((await readJson(res)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'audio'") });
    }
    expect(await balanceMicros(server, user.userId)).toBe(before);
    expect(fakes.speech.requests.filter((r) => r.method === "POST")).toHaveLength(0);
    // what clients send for audio files: audio/*, video/* (WebM, MP4), Ogg, or no type at all
    for (const type of ["audio/mpeg", "video/webm", "application/ogg", "application/octet-stream"]) {
      const res = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: authHeaders(user.key, false), body: audioForm({ model: "speechvendor-stt" }, Buffer.alloc(3_200, 1), type) });
      expect({ type, status: res.status }).toEqual({ type, status: 200 });
    }
  });

  it("a file part with no Content-Type (Python requests' files=) or text/plain, the form default, is taken when its bytes are audio", async () => {
    // RFC 7578 reads a part without a type as text/plain, and so does the form parser: such uploads were 400
    const send = (typeHeader: string, audio: Buffer) => fetch(`${server.url}/api/v1/task`, {
      method: "POST", headers: { ...authHeaders(user.key, false), "content-type": "multipart/form-data; boundary=b0undary" },
      body: Buffer.concat([
        Buffer.from('--b0undary\r\nContent-Disposition: form-data; name="model"\r\n\r\nspeechvendor-stt\r\n'),
        Buffer.from(`--b0undary\r\nContent-Disposition: form-data; name="audio"; filename="clip.mp3"\r\n${typeHeader}\r\n`), audio,
        Buffer.from("\r\n--b0undary--\r\n"),
      ]),
    });
    for (const typeHeader of ["", "Content-Type: text/plain\r\n"]) {
      fakes.speech.failNext(1, { kind: "status", status: 200, body: { language_code: "en", text: "", words: [] } });
      const { res, body, cost } = await charged(() => send(typeHeader, pcmWav(5)));
      expect({ typeHeader, status: res.status }).toEqual({ typeHeader, status: 200 });
      expect(body).toMatchObject({ object: "transcription", duration_seconds: 5 });
      expect(cost).toBe(5 * 100);
      const sent = fakes.speech.lastRequest()?.form?.get("file");
      expect(sent instanceof Blob && Buffer.from(await sent.arrayBuffer()).equals(pcmWav(5))).toBe(true);
    }
    // without a type, bytes that are not audio are refused before any upstream call
    const calls = fakes.speech.requests.length;
    const before = await balanceMicros(server, user.userId);
    const text = await send("", Buffer.from("just some notes, not audio"));
    expect(text.status).toBe(400);
    expect((await readJson(text)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'audio'") });
    expect(await balanceMicros(server, user.userId)).toBe(before);
    expect(fakes.speech.requests.length).toBe(calls);
  });

  it("malformed JSON 400, wrong content type 415, JSON over 1 MB 413", async () => {
    const bad = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: authHeaders(user.key), body: "{nope" });
    expect(bad.status).toBe(400);
    expect((await readJson(bad)).error.code).toBe("invalid_json");
    const text = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${user.key}`, "content-type": "text/plain" }, body: "hi" });
    expect(text.status).toBe(415);
    const huge = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "x".repeat(1_100_000) }] });
    expect(huge.status).toBe(413);
    expect((await readJson(huge)).error.code).toBe("payload_too_large");
  });

  it("authentication: missing, malformed, unknown and revoked keys are 401 invalid_api_key", async () => {
    const body = { model: "textA-4", messages: [{ role: "user", content: "x" }] };
    const none = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(none.status).toBe(401);
    expect((await readJson(none)).error).toMatchObject({ code: "invalid_api_key", type: "authentication_error" });
    for (const header of ["Basic abc", "Bearer", "Bearer ak-live-unknownunknownunknownunknown12"]) {
      const res = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { authorization: header, "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(res.status).toBe(401);
    }
    const other = await fundedUser(server, 1);
    await server.app.context.apiKeys.revoke(other.userId, other.keyId);
    const revoked = await postJson(server, "/api/v1/task", other.key, body);
    expect(revoked.status).toBe(401);
    expect((await readJson(revoked)).error.code).toBe("invalid_api_key");
  });

  it("402 insufficient_credits with current_balance and required_amount in dollars", async () => {
    const poor = await fundedUser(server, 0.05);
    const res = await postJson(server, "/api/v1/imageB.1", poor.key, { prompt: "a tree" });
    expect(res.status).toBe(402);
    expect(await readJson(res)).toEqual({ error: { message: expect.any(String), type: "insufficient_credits_error", code: "insufficient_credits", current_balance: 0.05, required_amount: 0.1 } });
    expect(res.headers.get("x-ratelimit-limit")).toBe("10000");
    expect(fakes.imageB.requests).toHaveLength(0);
  });
});
