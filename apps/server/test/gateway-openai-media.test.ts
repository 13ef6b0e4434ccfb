import { DEFAULT_PLANS } from "@gw/config";
import OpenAI, { toFile } from "openai";
import { describe, expect, it } from "vitest";
import { pcmWav, fakeSpeech, TINY_PNG } from "@gw/test-support";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";
import { useSdkHarness } from "./support/sdk-harness";

// SPEC 8 prices in micro-dollars
const IMAGE_STANDARD = 100_000;
const IMAGE_HIGH_RES = 200_000;
const TTS_PER_CHAR = 15;
const STT_PER_SECOND = 100;

/** A 5 s WAV: the fake transcribes it as 4 words ending at its byte length / 16,000 (10.00275 s), billed as 11 started seconds. */
const WAV = pcmWav(5);
const WAV_SECONDS = WAV.length / 16_000;
const WAV_COST = Math.ceil(WAV_SECONDS) * STT_PER_SECOND;

describe("OpenAI media and moderation routes through the official openai SDK", () => {
  const h = useSdkHarness({
    plans: DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 10_000 })),
    audioUploadLimitBytes: 400_000,
  });

  /** Runs `call` and returns its result with the micro-dollars it cost the suite's user. */
  async function charged<T>(call: () => Promise<T>): Promise<{ result: T; cost: number }> {
    const before = await balanceMicros(h.server, h.user.userId);
    const result = await call();
    return { result, cost: before - (await balanceMicros(h.server, h.user.userId)) };
  }

  /** The API error an SDK call threw. */
  async function refusal(call: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
    const err = await call().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    return err as InstanceType<typeof OpenAI.APIError>;
  }

  /** The suite user's latest usage record. */
  async function lastUsage(): Promise<Record<string, unknown>> {
    const res = await fetch(`${h.server.url}/api/usage?per_page=1`, { headers: { authorization: `Bearer ${h.user.key}` } });
    return ((await readJson(res)) as { data: Array<Record<string, unknown>> }).data[0] ?? {};
  }

  describe("images.generate", () => {
    it("imageA: n images as URLs, the upstream asked with n, size and response_format; charged per image; usage names the endpoint", async () => {
      const { result, cost } = await charged(() => h.client.images.generate({ model: "imageA", prompt: "a lighthouse at dusk", n: 2, size: "1024x1024" }));
      expect(result.data).toHaveLength(2);
      for (const image of result.data ?? []) expect(image.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/images\/.+\.png$/);
      expect(result.created).toEqual(expect.any(Number));
      expect(h.fakes.imageA.lastRequest()?.json).toMatchObject({ model: "imageA", n: 2, size: "1024x1024", response_format: "url" });
      expect(cost).toBe(2 * IMAGE_STANDARD);
      expect(await lastUsage()).toMatchObject({ endpoint: "/v1/images/generations", model: "imageA", images: 2 });
    });

    it("imageA: b64_json, a high-resolution size at its price", async () => {
      const { result, cost } = await charged(() => h.client.images.generate({ model: "imageA", prompt: "a red fox", size: "1792x1024", response_format: "b64_json" }));
      expect(result.data?.[0]?.b64_json).toBe(TINY_PNG.toString("base64"));
      expect(cost).toBe(IMAGE_HIGH_RES);
    });

    it("a Flux model (imageB-1-dev): the image data, and its URL when asked", async () => {
      const { result, cost } = await charged(() => h.client.images.generate({ model: "imageB-1-dev", prompt: "a quiet harbour", response_format: "b64_json" }));
      expect(Buffer.from(result.data?.[0]?.b64_json ?? "", "base64").subarray(1, 4).toString("latin1")).toBe("PNG");
      expect(cost).toBe(IMAGE_STANDARD);
      const byUrl = await h.client.images.generate({ model: "imageB-1-schnell", prompt: "a quiet harbour", size: "512x512" });
      expect(byUrl.data?.[0]?.url).toMatch(/^https?:\/\//);
    });

    it("refuses at no cost: a policy violation, a size the model cannot draw, an unknown model, n beyond the balance (402)", async () => {
      const before = await balanceMicros(h.server, h.user.userId);
      const sent = h.fakes.imageA.requests.length;
      const policy = await refusal(() => h.client.images.generate({ model: "imageA", prompt: "a nude portrait" }));
      expect(policy.status).toBe(400);
      expect(policy.error).toMatchObject({ code: "content_policy_violation", type: "invalid_request_error" });
      const size = await refusal(() => h.client.images.generate({ model: "imageB-1-dev", prompt: "a fox", size: "1000x1000" as "1024x1024" }));
      expect(size.status).toBe(400);
      expect(size.error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'size'") });
      const format = await refusal(() => h.client.images.generate({ model: "imageA", prompt: "a fox", response_format: "png" as "url" }));
      expect(format.error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'response_format'") });
      const model = await refusal(() => h.client.images.generate({ model: "textA-4", prompt: "a fox" }));
      expect(model.error).toMatchObject({ code: "unsupported_model" });
      expect(h.fakes.imageA.requests.length).toBe(sent);

      const poor = await fundedUser(h.server, 0.25);
      const client = new OpenAI({ apiKey: poor.key, baseURL: `${h.server.url}/v1`, maxRetries: 0 });
      const broke = await refusal(() => client.images.generate({ model: "imageA", prompt: "a fox", n: 3 }));
      expect(broke.status).toBe(402);
      expect(broke.error).toMatchObject({ code: "insufficient_credits", current_balance: 0.25, required_amount: 0.3 });
      expect(await balanceMicros(h.server, poor.userId)).toBe(250_000);
      expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
    });
  });

  describe("audio.speech.create", () => {
    it.each([
      ["mp3", "mp3_44100_128", "audio/mpeg"],
      ["opus", "opus_48000_128", "audio/opus"],
      ["wav", "wav_24000", "audio/wav"],
      ["pcm", "pcm_24000", "audio/pcm"],
    ] as const)("%s: the audio bytes with their content type, the upstream asked for %s; charged per character", async (format, upstream, type) => {
      const input = "Hello from the gateway";
      const { result, cost } = await charged(async () => {
        const res = await h.client.audio.speech.create({ model: "speechvendor-tts", voice: "Rachel" as "alloy", input, response_format: format });
        return { type: res.headers.get("content-type"), cost: res.headers.get("x-request-cost"), bytes: Buffer.from(await res.arrayBuffer()) };
      });
      expect(result.type).toMatch(new RegExp(`^${type}`));
      expect(result.bytes).toEqual(fakeSpeech("21m00Tcm4TlvDq8ikWAM", upstream, input));
      expect(cost).toBe(input.length * TTS_PER_CHAR);
      expect(result.cost).toBe((cost / 1e6).toFixed(6));
      expect(await lastUsage()).toMatchObject({ endpoint: "/v1/audio/speech", model: "speechvendor-tts", characters: input.length });
    });

    it("speed goes upstream as voice_settings.speed", async () => {
      await h.client.audio.speech.create({ model: "speechvendor-tts", voice: "Adam" as "alloy", input: "quick", speed: 1.1 });
      expect(h.fakes.speech.lastRequest()?.json).toMatchObject({ text: "quick", voice_settings: { speed: 1.1 } });
    });

    it("refuses at no cost what the upstream cannot produce, naming the field: aac, flac, a speed out of its range, an unknown voice", async () => {
      const before = await balanceMicros(h.server, h.user.userId);
      for (const format of ["aac", "flac"] as const) {
        const err = await refusal(() => h.client.audio.speech.create({ model: "speechvendor-tts", voice: "Rachel" as "alloy", input: "hi", response_format: format }));
        expect(err.status).toBe(400);
        expect(err.error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'response_format'") });
      }
      const speed = await refusal(() => h.client.audio.speech.create({ model: "speechvendor-tts", voice: "Rachel" as "alloy", input: "hi", speed: 2 }));
      expect(speed.error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'speed'") });
      const voice = await refusal(() => h.client.audio.speech.create({ model: "speechvendor-tts", voice: "alloy", input: "hi" }));
      expect(voice.error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'voice'") });
      const streamed = await refusal(() => h.client.audio.speech.create({ model: "speechvendor-tts", voice: "Rachel" as "alloy", input: "hi", stream_format: "sse" }));
      expect(streamed.error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'stream_format'") });
      const model = await refusal(() => h.client.audio.speech.create({ model: "speechvendor-stt", voice: "Rachel" as "alloy", input: "hi" }));
      expect(model.error).toMatchObject({ code: "unsupported_model" });
      expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
    });

    it("Idempotency-Key replays the audio bytes and charges once", async () => {
      const body = { model: "speechvendor-tts", voice: "Bella", input: "once only" };
      const headers = { "idempotency-key": `speech-${Date.now()}` };
      const { result: [first, second], cost } = await charged(async () => {
        const a = await postJson(h.server, "/v1/audio/speech", h.user.key, body, headers);
        const b = await postJson(h.server, "/v1/audio/speech", h.user.key, body, headers);
        return [a, b];
      });
      expect(second?.headers.get("idempotent-replayed")).toBe("true");
      expect(second?.headers.get("content-type")).toMatch(/^audio\/mpeg/);
      expect(Buffer.from(await second?.arrayBuffer() ?? new ArrayBuffer(0))).toEqual(Buffer.from(await first?.arrayBuffer() ?? new ArrayBuffer(1)));
      expect(cost).toBe(body.input.length * TTS_PER_CHAR);
    });
  });

  describe("audio.transcriptions.create", () => {
    const file = () => toFile(WAV, "clip.wav", { type: "audio/wav" });

    it("json: {text, usage}; the language goes upstream; charged per started second; usage names the endpoint", async () => {
      const { result, cost } = await charged(async () => h.client.audio.transcriptions.create({ file: await file(), model: "speechvendor-stt", language: "en" }));
      expect(result).toEqual({ text: `transcript of ${WAV.length} bytes`, usage: { type: "duration", seconds: WAV_SECONDS } });
      expect(h.fakes.speech.lastRequest()?.form?.get("language_code")).toBe("en");
      expect(cost).toBe(WAV_COST);
      expect(await lastUsage()).toMatchObject({ endpoint: "/v1/audio/transcriptions", model: "speechvendor-stt", audio_seconds: Math.ceil(WAV_SECONDS) });
    });

    it("text, srt, vtt and verbose_json (with words when asked), each charged the same", async () => {
      const text = `transcript of ${WAV.length} bytes`;
      const asText = await charged(async () => h.client.audio.transcriptions.create({ file: await file(), model: "speechvendor-stt", response_format: "text" }));
      expect(asText.result).toBe(text);
      expect(asText.cost).toBe(WAV_COST);

      const srt = await h.client.audio.transcriptions.create({ file: await file(), model: "speechvendor-stt", response_format: "srt" });
      // cues of at most 6 s: the fake's four words are 2.5 s each
      const [head, tail] = [text.split(" ").slice(0, 3).join(" "), "bytes"];
      expect(srt).toBe(`1\n00:00:00,000 --> 00:00:07,502\n${head}\n\n2\n00:00:07,502 --> 00:00:10,003\n${tail}\n`);
      const vtt = await h.client.audio.transcriptions.create({ file: await file(), model: "speechvendor-stt", response_format: "vtt" });
      expect(vtt).toBe(`WEBVTT\n\n00:00:00.000 --> 00:00:07.502\n${head}\n\n00:00:07.502 --> 00:00:10.003\n${tail}\n`);

      const verbose = await h.client.audio.transcriptions.create({
        file: await file(), model: "speechvendor-stt", response_format: "verbose_json", timestamp_granularities: ["word", "segment"],
      });
      expect(verbose).toMatchObject({ task: "transcribe", language: "en", duration: WAV_SECONDS, text });
      expect(verbose.segments).toEqual([expect.objectContaining({ id: 0, start: 0, text: head }), expect.objectContaining({ id: 1, end: WAV_SECONDS, text: tail })]);
      expect(verbose.words?.map((w) => w.word)).toEqual(text.split(" "));
      expect(verbose.words?.at(-1)?.end).toBe(WAV_SECONDS);
    });

    it("refuses at no cost: no file, a file over the limit (413), an unknown format, a form that is not multipart", async () => {
      const before = await balanceMicros(h.server, h.user.userId);
      const form = new FormData();
      form.append("model", "speechvendor-stt");
      const noFile = await fetch(`${h.server.url}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${h.user.key}` }, body: form });
      expect(noFile.status).toBe(400);
      expect(await readJson(noFile)).toEqual({ error: { message: "Missing required parameter: 'file'.", type: "invalid_request_error", code: "missing_required_parameter" } });

      const big = await refusal(async () => h.client.audio.transcriptions.create({ file: await toFile(pcmWav(13), "long.wav", { type: "audio/wav" }), model: "speechvendor-stt" }));
      expect(big.status).toBe(413);
      expect(big.error).toMatchObject({ code: "payload_too_large" });

      const format = await refusal(async () => h.client.audio.transcriptions.create({ file: await file(), model: "speechvendor-stt", response_format: "xml" as "json" }));
      expect(format.error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'response_format'") });

      const streamed = new FormData();
      streamed.append("model", "speechvendor-stt");
      streamed.append("stream", "true");
      streamed.append("file", new Blob([WAV], { type: "audio/wav" }), "clip.wav");
      const stream = await fetch(`${h.server.url}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${h.user.key}` }, body: streamed });
      expect(stream.status).toBe(400);
      expect((await readJson(stream)).error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'stream'") });

      const json = await postJson(h.server, "/v1/audio/transcriptions", h.user.key, { model: "speechvendor-stt" });
      expect(json.status).toBe(415);
      expect(await balanceMicros(h.server, h.user.userId)).toBe(before);
    });
  });

  describe("moderations.create", () => {
    it("answers OpenAI's shape from the gateway's own policy, one result per input, free", async () => {
      const { result, cost } = await charged(() => h.client.moderations.create({ input: ["a walk in the park", "a nude portrait"] }));
      expect(result.id).toMatch(/^modr-/);
      expect(result.results).toHaveLength(2);
      expect(result.results[0]).toMatchObject({ flagged: false, categories: { sexual: false, violence: false } });
      expect(result.results[1]).toMatchObject({ flagged: true, categories: { sexual: true, violence: false }, category_scores: { sexual: 1, violence: 0 } });
      expect(cost).toBe(0);
      const one = await h.client.moderations.create({ input: "call me at +1 415 555 0100", model: "omni-moderation-latest" });
      expect(one.results[0]).toMatchObject({ flagged: true, categories: { personal_information: true } });
      const parts = await h.client.moderations.create({ input: [{ type: "text", text: "hello" }, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] });
      expect(parts.results).toHaveLength(1);
      const bad = await refusal(() => h.client.moderations.create({ input: 5 as unknown as string }));
      expect(bad.error).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'input'") });
    });
  });
});
