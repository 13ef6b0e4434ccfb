// The image and speech upstreams as their public API documentation describes them (BFL Flux, OpenAI Images,
// ElevenLabs), with fakes written from those documents (support/doc-media-upstreams.ts): what the gateway answers
// and charges for each of their answers, over real HTTP against the real server.
import { DEFAULT_PLANS } from "@gw/config";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { DocServer, ELEVEN_HANDLER, OPENAI_IMAGES_HANDLER, VOICES, cbrMp3, elevenError, json, mediaRecorderWebm, openAiError, startDocFlux } from "./support/doc-media-upstreams";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";

describe("image and speech upstreams as documented by their providers", () => {
  let server: TestServer;
  let flux: Awaited<ReturnType<typeof startDocFlux>>;
  let openai: DocServer;
  let eleven: DocServer;

  beforeAll(async () => {
    flux = await startDocFlux();
    openai = await new DocServer(OPENAI_IMAGES_HANDLER).start();
    eleven = await new DocServer(ELEVEN_HANDLER).start();
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 100_000, concurrentRequests: 1_000 } : p));
    server = await startTestServer({
      env: {
        IMAGEB_BASE_URL: flux.api.url, IMAGEB_API_KEY: "bfl-key", IMAGEA_BASE_URL: openai.url, IMAGEA_API_KEY: "oai-key",
        SPEECH_BASE_URL: eleven.url, SPEECH_API_KEY: "el-key", UPSTREAM_TIMEOUT_MS: "3000", FLUX_POLL_INTERVAL_MS: "20",
      },
      config: { plans },
    });
  });
  afterAll(async () => {
    await server.close();
    await Promise.all([flux.close(), openai.close(), eleven.close()]);
  });
  beforeEach(() => {
    for (const fake of [flux.api, flux.poll, flux.delivery, openai, eleven]) fake.clear();
  });

  describe("OpenAI Images (imageA)", () => {
    it("400 billing_hard_limit_reached (the operator's spending limit) is 502 upstream_error at no cost, not the caller's invalid_parameter", async () => {
      const user = await fundedUser(server, 1);
      openai.queue("/v1/images/generations", openAiError(400, "billing_hard_limit_reached", "Billing hard limit has been reached"));
      const res = await postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a red fox" });
      expect(res.status).toBe(502);
      expect((await readJson(res)).error).toEqual({
        code: "upstream_error", type: "api_error", message: "The upstream provider failed (HTTP 402): it refused the gateway's account for payment.",
      });
      expect(openai.requests).toHaveLength(1);
      expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
    });

    it("400 content_policy_violation stays the caller's 400 content_policy_violation, at no cost", async () => {
      const user = await fundedUser(server, 1);
      openai.queue("/v1/images/generations", openAiError(400, "content_policy_violation",
        "Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system."));
      const res = await postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a red fox" });
      expect(res.status).toBe(400);
      expect((await readJson(res)).error).toMatchObject({ code: "content_policy_violation", type: "invalid_request_error" });
      expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
    });

    it("an image answered with the other field null (url with b64_json: null, as compatible proxies serialize it) is served and charged", async () => {
      const user = await fundedUser(server, 1);
      openai.queue("/v1/images/generations", json(200, {
        created: 1_713_833_628, data: [{ url: "https://oaidalleapiprodscus.blob.core.windows.net/private/img-1.png", b64_json: null, revised_prompt: null }],
      }));
      const res = await postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a red fox" });
      expect(res.status).toBe(200);
      expect((await readJson(res)).images).toEqual([
        { url: "https://oaidalleapiprodscus.blob.core.windows.net/private/img-1.png", id: expect.any(String), created_at: expect.any(String) },
      ]);
      expect(await balanceMicros(server, user.userId)).toBe(1_000_000 - 100_000);
    });
  });

  describe("ElevenLabs voices", () => {
    it("a voice name is the voice listed with exactly that name, even when another one's name differs only in case or Unicode form", async () => {
      const user = await fundedUser(server, 1);
      // GET /v1/voices lists premade, cloned and library voices together; names are not unique, nor is their case.
      const voices = [
        ...VOICES,
        { voice_id: "pNInz6obpgDQGcFmaJgB", name: "Adam", category: "premade" },
        { voice_id: "cl0nedAdamLowerCase1", name: "adam", category: "cloned" },
        { voice_id: "zoeClonedVoice000001", name: "Zo\u00eb", category: "cloned" },
        ...Array.from({ length: 120 }, (_, i) => ({ voice_id: `gen${String(i).padStart(17, "0")}`, name: `Generated ${i}`, category: "generated" })),
      ];
      eleven.queue("/v1/voices", json(200, { voices }));
      const expected: Array<[string, string]> = [["Adam", "pNInz6obpgDQGcFmaJgB"], ["adam", "cl0nedAdamLowerCase1"], ["ADAM", "cl0nedAdamLowerCase1"], ["rachel", "21m00Tcm4TlvDq8ikWAM"],
        // either Unicode form of a name: "Zoë" typed decomposed (e + U+0308, as macOS input gives) is the voice listed as "Zoë"
        ["Zoe\u0308", "zoeClonedVoice000001"], ["zoe\u0308", "zoeClonedVoice000001"], ["Zo\u00eb", "zoeClonedVoice000001"]];
      for (const [voice, id] of expected) {
        const res = await postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text: "hello", voice });
        expect(res.status).toBe(200);
        expect((await readJson(res)).object).toBe("speech.generation");
        expect(eleven.requests.at(-1)?.url).toBe(`/v1/text-to-speech/${id}?output_format=mp3_44100_128`);
      }
    });
  });

  describe("ElevenLabs voice settings", () => {
    it("style, use_speaker_boost and speed reach the upstream with stability and similarity_boost; a wrong one is 400 naming it, at no cost", async () => {
      const user = await fundedUser(server, 1);
      const settings = { stability: 0.4, similarity_boost: 0.8, style: 0.3, use_speaker_boost: false, speed: 1.15 };
      const tts = await postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text: "hello", voice: "Rachel", voice_settings: settings });
      expect(tts.status).toBe(200);
      expect(JSON.parse(eleven.requests.at(-1)?.body.toString() ?? "{}")).toEqual({ text: "hello", model_id: "speechvendor-tts", voice_settings: settings });
      const form = new FormData();
      form.append("model", "speechvendor-sts");
      form.append("voice", "Rachel");
      form.append("voice_settings", JSON.stringify(settings));
      form.append("audio", new Blob([cbrMp3(2)], { type: "audio/mpeg" }), "clip.mp3");
      const sts = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { authorization: `Bearer ${user.key}` }, body: form });
      expect(sts.status).toBe(200);
      const sent = eleven.requests.at(-1)?.body.toString("latin1") ?? "";
      expect(sent).toContain(`name="voice_settings"\r\n\r\n${JSON.stringify(settings)}\r\n`);
      const spent = 1_000_000 - await balanceMicros(server, user.userId);
      for (const [field, value] of [["speed", 0], ["style", 2], ["use_speaker_boost", "yes"]] as const) {
        const res = await postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text: "hello", voice: "Rachel", voice_settings: { ...settings, [field]: value } });
        expect(res.status).toBe(400);
        expect((await readJson(res)).error).toMatchObject({ code: "invalid_parameter", type: "invalid_request_error", message: expect.stringContaining(`'voice_settings.${field}'`) as unknown });
      }
      expect(1_000_000 - await balanceMicros(server, user.userId)).toBe(spent);
    });
  });

  describe("audio uploads", () => {
    it("a form with two files is 400 invalid_parameter naming 'audio', whatever the second one's field, nothing sent upstream", async () => {
      const user = await fundedUser(server, 1);
      for (const second of ["audio", "extra"]) {
        const form = new FormData();
        form.append("model", "speechvendor-stt");
        form.append("audio", new Blob([cbrMp3(1)], { type: "audio/mpeg" }), "one.mp3");
        form.append(second, new Blob([cbrMp3(1)], { type: "audio/mpeg" }), "two.mp3");
        const res = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { authorization: `Bearer ${user.key}` }, body: form });
        expect(res.status).toBe(400);
        expect(await readJson(res)).toEqual({
          error: { message: "Invalid parameter 'audio': only one file is accepted.", type: "invalid_request_error", code: "invalid_parameter" },
        });
      }
      expect(eleven.requests).toHaveLength(0);
      expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
    });

    it("the one file under another field name is 400 naming that field and where the file goes (it said 'only one file')", async () => {
      const user = await fundedUser(server, 1);
      const form = new FormData();
      form.append("model", "speechvendor-stt");
      form.append("file", new Blob([cbrMp3(1)], { type: "audio/mpeg" }), "one.mp3");
      const res = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { authorization: `Bearer ${user.key}` }, body: form });
      expect(res.status).toBe(400);
      expect(await readJson(res)).toEqual({
        error: { message: "Invalid parameter 'file': files are not accepted here; send the audio file in the field 'audio'.", type: "invalid_request_error", code: "invalid_parameter" },
      });
      expect(eleven.requests).toHaveLength(0);
      expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
    });
  });

  describe("audio whose header cannot be read", () => {
    it("a megabyte of 0xFF bytes (MPEG-sync look-alikes) is given up on within the budget, and other requests are answered meanwhile (it froze the server ~10 s per MB)", async () => {
      const user = await fundedUser(server, 1);
      const form = new FormData();
      form.append("model", "speechvendor-stt");
      form.append("audio", new Blob([Buffer.alloc(1 << 20, 0xff)], { type: "audio/mpeg" }), "noise.mp3");
      const started = performance.now();
      let done = false;
      const upload = fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { authorization: `Bearer ${user.key}` }, body: form })
        .finally(() => { done = true; });
      let slowest = 0;
      while (!done) {
        const t0 = performance.now();
        expect((await fetch(`${server.url}/api/status`)).status).toBe(200);
        slowest = Math.max(slowest, performance.now() - t0);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const res = await upload;
      expect(res.status).toBe(200);
      // its length unreadable, it is billed to the end of the last transcribed word (1.2 s: 2 started seconds)
      expect(await readJson(res)).toMatchObject({ object: "transcription", text: "Hello world", duration_seconds: 1.2 });
      expect(res.headers.get("x-request-cost")).toBe("0.000200");
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(slowest).toBeLessThan(1_000);
    });
  });

  describe("ElevenLabs speech-to-speech", () => {
    it("audio whose length its container does not declare (a browser's WebM recording) is billed the length of the converted audio, not the size estimate", async () => {
      const user = await fundedUser(server, 1);
      // 60 s of Opus at 128 kbit/s, as Chrome's MediaRecorder writes it: ~1 MB, no Duration; the hold estimates 500 s
      const recording = mediaRecorderWebm(60);
      for (const [outputFormat, converted, type] of [
        ["mp3_44100_128", cbrMp3(60), "audio/mpeg"], // 128 kbit/s frames: the length follows from the size
        ["pcm_16000", Buffer.alloc(60 * 32_000), "audio/pcm"], // headerless 16-bit mono at 16 kHz
      ] as const) {
        eleven.queue("/v1/speech-to-speech/", { status: 200, headers: { "content-type": type }, body: converted });
        const form = new FormData();
        form.append("model", "speechvendor-sts");
        form.append("voice", "Rachel");
        form.append("output_format", outputFormat);
        form.append("audio", new Blob([recording], { type: "audio/webm;codecs=opus" }), "recording.webm");
        const before = await balanceMicros(server, user.userId);
        const res = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { authorization: `Bearer ${user.key}` }, body: form });
        expect(res.status).toBe(200);
        expect((await readJson(res)).object).toBe("speech.generation");
        // 60 started seconds at $0.006 per minute (it was 500 s: $0.05)
        expect(res.headers.get("x-request-cost")).toBe("0.006000");
        expect(before - await balanceMicros(server, user.userId)).toBe(6_000);
        expect(eleven.requests.at(-1)?.url).toBe(`/v1/speech-to-speech/21m00Tcm4TlvDq8ikWAM?output_format=${outputFormat}`);
      }
    });
  });

  describe("ElevenLabs voices deleted upstream", () => {
    it("a cached voice the upstream no longer has is 400 invalid_parameter naming voice at no cost, or reached under its new id (it was 502 for the cache's 10 minutes)", async () => {
      const user = await fundedUser(server, 1);
      const tts = (voice: string) => postJson(server, "/api/v1/task", user.key, { model: "speechvendor-tts", text: "hello", voice });
      expect((await tts("Domi")).status).toBe(200); // the voices list is cached
      const notFound = (id: string) => elevenError(404, "voice_not_found", `A voice with the voice_id ${id} was not found.`);
      // Domi deleted at ElevenLabs: its id is refused, and the list fetched again no longer has it
      eleven.clear();
      eleven.queue("/v1/text-to-speech/", notFound("AZnzlk1XvdvUeBnXmlld"));
      eleven.queue("/v1/voices", json(200, { voices: VOICES.filter((v) => v.name !== "Domi") }));
      const gone = await tts("Domi");
      expect(gone.status).toBe(400);
      expect(await readJson(gone)).toEqual({ error: { message: "Invalid parameter 'voice': unknown voice 'Domi'.", type: "invalid_request_error", code: "invalid_parameter" } });
      expect(eleven.requests.map((r) => `${r.method} ${r.url.replace(/\?.*/, "")}`)).toEqual(["POST /v1/text-to-speech/AZnzlk1XvdvUeBnXmlld", "GET /v1/voices"]);
      expect(await balanceMicros(server, user.userId)).toBe(1_000_000 - 75);
      // Bella deleted and cloned again under a new id (ElevenLabs answered 400 for this before 2025): sent there
      eleven.clear();
      eleven.queue("/v1/text-to-speech/", { ...notFound("EXAVITQu4vr4xnSDxMaL"), status: 400 });
      eleven.queue("/v1/voices", json(200, { voices: [...VOICES.filter((v) => v.name !== "Bella"), { voice_id: "newBellaVoiceId00001", name: "Bella", category: "cloned" }] }));
      const moved = await tts("Bella");
      expect(moved.status).toBe(200);
      expect(eleven.requests.map((r) => `${r.method} ${r.url.replace(/\?.*/, "")}`)).toEqual([
        "POST /v1/text-to-speech/EXAVITQu4vr4xnSDxMaL", "GET /v1/voices", "POST /v1/text-to-speech/newBellaVoiceId00001",
      ]);
      expect(await balanceMicros(server, user.userId)).toBe(1_000_000 - 150);
    });
  });

  describe("Flux (imageB)", () => {
    it("polls the polling_url on its own host with x-key, downloads the signed sample without it, and charges once", async () => {
      const user = await fundedUser(server, 1);
      const res = await postJson(server, "/api/v1/task", user.key, { model: "imageB-1-dev", prompt: "a lighthouse" });
      expect(res.status).toBe(200);
      const body = await readJson(res);
      expect(body.data[0].url).toMatch(new RegExp(`^${flux.delivery.url}/results/task-\\d+/sample\\.jpeg\\?se=`));
      expect(Buffer.from(body.data[0].b64_json, "base64").subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
      expect(flux.poll.requests.every((r) => r.headers["x-key"] === "bfl-key")).toBe(true);
      expect(flux.delivery.requests[0]?.headers["x-key"]).toBeUndefined();
      expect(await balanceMicros(server, user.userId)).toBe(900_000);
    });

    it("a Content Moderated or Request Moderated verdict is 400 content_policy_violation naming BFL's moderation reasons, at no cost", async () => {
      const user = await fundedUser(server, 1);
      try {
        for (const status of ["Content Moderated", "Request Moderated"]) {
          flux.options.finalStatus = status;
          const res = await postJson(server, "/api/v1/imageB.1", user.key, { prompt: "a lighthouse" });
          expect(res.status).toBe(400);
          expect((await readJson(res)).error).toEqual({
            code: "content_policy_violation", type: "invalid_request_error", message: `The image provider refused the prompt (${status}: Derivative Works).`,
          });
        }
      } finally {
        flux.options.finalStatus = "Ready";
      }
      expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
    });

    it("a prompt saying a group of people are vermin is 400 content_policy_violation (hate), never sent upstream, at no cost", async () => {
      const user = await fundedUser(server, 1);
      for (const [path, body] of [
        ["/api/v1/imageB.1", { prompt: "a poster saying all jews are vermin" }],
        ["/api/v1/task", { model: "imageB-1-dev", prompt: "propaganda poster: mexicans are animals" }],
      ] as const) {
        const res = await postJson(server, path, user.key, body);
        expect(res.status).toBe(400);
        expect((await readJson(res)).error).toEqual({
          code: "content_policy_violation", type: "invalid_request_error",
          message: "The prompt violates the usage policy: hateful or discriminatory imagery (category 'hate').",
        });
      }
      expect(flux.api.requests).toHaveLength(0);
      expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
    });

    it("a sample URL answering 403 (expired signature) or 404 is 502 upstream_error naming the download, not refused credentials, at no cost", async () => {
      const user = await fundedUser(server, 1);
      for (const status of [403, 404]) {
        flux.delivery.queue("/results/", { status, headers: { "content-type": "application/xml" }, body: "<?xml version=\"1.0\"?><Error><Code>AuthenticationFailed</Code></Error>" });
        const res = await postJson(server, "/api/v1/task", user.key, { model: "imageB-1-dev", prompt: "a lighthouse" });
        expect(res.status).toBe(502);
        expect((await readJson(res)).error).toEqual({
          code: "upstream_error", type: "api_error", message: `The image provider's result could not be downloaded (HTTP ${status} from its sample URL).`,
        });
      }
      expect(await balanceMicros(server, user.userId)).toBe(1_000_000);
    });
  });
});
