// ElevenLabs adapter: voices (cached, case-insensitive), TTS, STS and STT against the fake over real HTTP.
import { fakeSpeech, fakeTranscription, FAKE_KEYS } from "@gw/test-support";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createProviderGateway } from "../src/create-provider-gateway";
import { caught, noAbort, startProviderHarness, type ProviderHarness } from "./helpers";

let h: ProviderHarness;
const RACHEL = "21m00Tcm4TlvDq8ikWAM";
const audio = { data: Buffer.alloc(48_000, 1), filename: "clip.wav", contentType: "audio/wav" };

beforeAll(async () => { h = await startProviderHarness(); });
afterAll(async () => { await h.close(); });
beforeEach(() => { h.fakes.clearAll(); });

const tts = (voice: string, gateway = h.gateway) =>
  gateway.textToSpeech({ model: h.model("speechvendor-tts"), voice, text: "Hello world", signal: noAbort() });

describe("text-to-speech", () => {
  it("resolves the voice name case-insensitively and returns the audio bytes", async () => {
    const gateway = createProviderGateway(h.config);
    try {
      const result = await gateway.textToSpeech({
        model: h.model("speechvendor-tts"), voice: "rachel", text: "Hello world", outputFormat: "mp3_22050_32",
        voiceSettings: { stability: 0.4, similarity_boost: 0.7 }, signal: noAbort(),
      });
      expect(result.audio.equals(fakeSpeech(RACHEL, "mp3_22050_32", "Hello world"))).toBe(true);
      expect(result.contentType).toBe("audio/mpeg");
      const sent = h.fakes.speech.lastRequest();
      expect(sent?.path).toBe(`/v1/text-to-speech/${RACHEL}`);
      expect(sent?.query).toEqual({ output_format: "mp3_22050_32" });
      expect(sent?.headers["xi-api-key"]).toBe(FAKE_KEYS.speech);
      expect(sent?.json).toEqual({ text: "Hello world", model_id: "speechvendor-tts", voice_settings: { stability: 0.4, similarity_boost: 0.7 } });
    } finally {
      await gateway.close();
    }
  });

  it("caches the voices list across requests", async () => {
    const gateway = createProviderGateway(h.config);
    try {
      await Promise.all([tts("Adam", gateway), tts("Bella", gateway)]);
      await tts("ADAM", gateway);
      expect(h.fakes.speech.requests.filter((r) => r.path === "/v1/voices")).toHaveLength(1);
    } finally {
      await gateway.close();
    }
  });

  it("answers invalid_parameter 400 naming an unknown voice", async () => {
    const err = await caught(() => tts("Nobody"));
    expect({ code: err.code, status: err.status }).toEqual({ code: "invalid_parameter", status: 400 });
    expect(err.message).toContain("Nobody");
  });

  it("finds a voice added upstream after the list was cached", async () => {
    const gateway = createProviderGateway(h.config, { voices: { missRefreshMs: 0 } });
    try {
      await tts("Rachel", gateway);
      h.fakes.speech.voices.push({ voice_id: "newvoice123", name: "Zoe" });
      await expect(tts("zoe", gateway)).resolves.toMatchObject({ contentType: "audio/mpeg" });
    } finally {
      await gateway.close();
    }
  });

  it("keeps answering from the expired list while the voices endpoint fails, and takes the new list once it answers", async () => {
    const gateway = createProviderGateway(h.config, { voices: { ttlMs: 0, missRefreshMs: 60_000, retryMs: 0 } });
    try {
      await tts("Rachel", gateway);
      h.fakes.speech.failNext(5, { kind: "status", status: 503 }, { path: "/v1/voices" });
      await expect(tts("Rachel", gateway)).resolves.toMatchObject({ contentType: "audio/mpeg" });
      h.fakes.speech.failNext(1, { kind: "hang" }, { path: "/v1/voices" });
      await expect(tts("Bella", gateway)).resolves.toMatchObject({ contentType: "audio/mpeg" });
      // the voices endpoint is back: a voice added there is found once the background fetch has landed
      h.fakes.clearAll();
      h.fakes.speech.voices.push({ voice_id: "newvoice456", name: "Yara" });
      await tts("Rachel", gateway);
      // polled, not slept for: the background fetch lands when it lands
      await expect.poll(() => tts("Yara", gateway).then(() => true, () => false), { timeout: 5_000 }).toBe(true);
      expect(h.fakes.speech.requests.filter((r) => r.path === "/v1/voices").length).toBeGreaterThan(0);
    } finally {
      h.fakes.speech.voices.pop();
      await gateway.close();
    }
  });

  it("after a failed background refresh, the expired list answers for retryMs without asking the voices endpoint again", async () => {
    const gateway = createProviderGateway(h.config, { voices: { ttlMs: 0, missRefreshMs: 60_000, retryMs: 60_000 } });
    const voiceFetches = () => h.fakes.speech.requests.filter((r) => r.path === "/v1/voices").length;
    try {
      await tts("Rachel", gateway);
      // a refusal is not retried by the client: the one background refresh is one request
      h.fakes.speech.failNext(100, { kind: "status", status: 401 }, { path: "/v1/voices" });
      await tts("Rachel", gateway);
      await expect.poll(voiceFetches, { timeout: 10_000, interval: 20 }).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const voice of ["Rachel", "Bella", "adam"]) await expect(tts(voice, gateway)).resolves.toMatchObject({ contentType: "audio/mpeg" });
      expect(voiceFetches()).toBe(2);
    } finally {
      await gateway.close();
    }
  });

  it("after a failed fetch for an unknown name, the next unknown names answer 400 from the cached list for retryMs", async () => {
    const gateway = createProviderGateway(h.config, { voices: { ttlMs: 60_000, missRefreshMs: 0, retryMs: 60_000 } });
    const voiceFetches = () => h.fakes.speech.requests.filter((r) => r.path === "/v1/voices").length;
    try {
      await tts("Rachel", gateway);
      // a refusal is not retried by the client: the one miss refresh is one request
      h.fakes.speech.failNext(100, { kind: "status", status: 401 }, { path: "/v1/voices" });
      expect((await caught(() => tts("Nobody", gateway))).code).not.toBe("invalid_parameter");
      expect(voiceFetches()).toBe(2);
      for (const voice of ["Nobody", "Somebody"]) {
        const err = await caught(() => tts(voice, gateway));
        expect({ code: err.code, status: err.status }).toEqual({ code: "invalid_parameter", status: 400 });
      }
      await expect(tts("Bella", gateway)).resolves.toMatchObject({ contentType: "audio/mpeg" });
      expect(voiceFetches()).toBe(2);
    } finally {
      await gateway.close();
    }
  });

  it("rejects a non-audio 200 and a body truncated past the retries, and retries one truncated body", async () => {
    await tts("Rachel");
    h.fakes.speech.failNext(1, { kind: "wrong-shape" }, { path: "/v1/text-to-speech" });
    expect((await caught(() => tts("Rachel"))).code).toBe("upstream_error");
    h.fakes.speech.failNext(1, { kind: "truncate" }, { path: "/v1/text-to-speech" });
    await expect(tts("Rachel")).resolves.toMatchObject({ contentType: "audio/mpeg" });
    h.fakes.speech.failNext(3, { kind: "truncate" }, { path: "/v1/text-to-speech" });
    const err = await caught(() => tts("Rachel"));
    expect({ code: err.code, message: err.message }).toEqual({ code: "upstream_error", message: "The upstream answer broke off before it finished." });
  });

  it("an account out of characters (401 quota_exceeded) is the gateway's account failing to pay, not refused credentials", async () => {
    await tts("Rachel");
    // ElevenLabs' own answer when the account's character quota is used up
    const body = { detail: { status: "quota_exceeded", message: "This request exceeds your quota of 10000. You have 3 credits remaining, while 25 credits are required for this request." } };
    h.fakes.speech.failNext(1, { kind: "status", status: 401, body }, { path: "/v1/text-to-speech" });
    const err = await caught(() => tts("Rachel"));
    expect({ code: err.code, message: err.message }).toEqual({ code: "upstream_error", message: "The upstream provider failed (HTTP 402): it refused the gateway's account for payment." });
    h.fakes.speech.failNext(1, { kind: "status", status: 401, body: { detail: { status: "invalid_api_key", message: "Invalid API key" } } }, { path: "/v1/text-to-speech" });
    expect((await caught(() => tts("Rachel"))).message).toBe("The upstream provider failed (HTTP 401): it refused the gateway's credentials.");
  });
});

describe("speech-to-speech and speech-to-text", () => {
  it("sends the audio as multipart with model_id and voice settings", async () => {
    const result = await h.gateway.speechToSpeech({
      model: h.model("speechvendor-sts"), voice: "Bella", audio, voiceSettings: { stability: 0.5, similarity_boost: 0.5 }, signal: noAbort(),
    });
    expect(result.audio.subarray(0, 9).toString()).toBe("FAKE-STS|");
    const sent = h.fakes.speech.lastRequest();
    expect(sent?.path).toBe("/v1/speech-to-speech/EXAVITQu4vr4xnSDxMaL");
    expect(sent?.form?.get("model_id")).toBe("speechvendor-sts");
    expect(JSON.parse(String(sent?.form?.get("voice_settings")))).toEqual({ stability: 0.5, similarity_boost: 0.5 });
    const file = sent?.form?.get("audio");
    expect(file instanceof Blob ? file.size : 0).toBe(audio.data.length);
  });

  it("transcribes and reports where the last timed word ends (ElevenLabs reports no duration)", async () => {
    const result = await h.gateway.speechToText({ model: h.model("speechvendor-stt"), audio, signal: noAbort() });
    const expected = fakeTranscription(audio.data);
    expect(result.text).toBe(expected.text);
    expect(result.durationSeconds).toBeUndefined();
    expect(result.lastWordEndSeconds).toBeCloseTo(expected.durationSeconds, 6);
    expect(h.fakes.speech.lastRequest()?.form?.get("model_id")).toBe("speechvendor-stt");
  });

  it("retries a 503 with the multipart body intact", async () => {
    h.fakes.speech.failStatus(1, 503, { path: "/v1/speech-to-text" });
    await expect(h.gateway.speechToText({ model: h.model("speechvendor-stt"), audio, signal: noAbort() })).resolves.toMatchObject({ lastWordEndSeconds: 3 });
    const last = h.fakes.speech.lastRequest()?.form?.get("file");
    expect(last instanceof Blob ? last.size : 0).toBe(audio.data.length);
  });

  it("rejects garbage JSON from speech-to-text", async () => {
    h.fakes.speech.failNext(1, { kind: "garbage" });
    expect((await caught(() => h.gateway.speechToText({ model: h.model("speechvendor-stt"), audio, signal: noAbort() }))).code).toBe("upstream_error");
  });
});
