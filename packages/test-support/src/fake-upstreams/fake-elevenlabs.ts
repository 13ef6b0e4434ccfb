// A fake ElevenLabs upstream: voices, text-to-speech, speech-to-speech (multipart), speech-to-text (multipart).
import { fakeSpeech, fakeTranscription } from "./deterministic";
import { FakeServer, sendBody, sendJson, type HandlerContext } from "./fake-server";

export interface FakeVoice {
  voice_id: string;
  name: string;
}

export const DEFAULT_FAKE_VOICES: readonly FakeVoice[] = [
  { voice_id: "21m00Tcm4TlvDq8ikWAM", name: "Rachel" },
  { voice_id: "pNInz6obpgDQGcFmaJgB", name: "Adam" },
  { voice_id: "EXAVITQu4vr4xnSDxMaL", name: "Bella" },
];

const DEFAULT_FORMAT = "mp3_44100_128";

export class FakeElevenLabs extends FakeServer {
  voices: FakeVoice[] = [...DEFAULT_FAKE_VOICES];

  constructor(readonly apiKey: string) {
    super();
  }

  protected override resetOptions(): void {
    this.voices = [...DEFAULT_FAKE_VOICES];
  }

  protected errorBody(status: number, message: string): unknown {
    return { detail: { status: status >= 500 ? "internal_error" : "invalid_request", message } };
  }

  protected async route(ctx: HandlerContext): Promise<boolean> {
    if (ctx.req.headers["xi-api-key"] !== this.apiKey) {
      sendJson(ctx.res, 401, { detail: { status: "invalid_api_key", message: "Invalid API key" } });
      return true;
    }
    const { method } = ctx.record;
    const path = ctx.url.pathname;
    if (method === "GET" && path === "/v1/voices") {
      sendBody(ctx, "application/json", JSON.stringify({ voices: this.voices.map((v) => ({ ...v, category: "premade" })) }));
      return true;
    }
    if (method === "GET" && path === "/v1/user") {
      sendJson(ctx.res, 200, { subscription: { tier: "fake" } });
      return true;
    }
    if (method === "POST" && path === "/v1/speech-to-text") return this.speechToText(ctx);
    const voicePath = /^\/v1\/(text-to-speech|speech-to-speech)\/([^/]+)$/.exec(path);
    if (method !== "POST" || !voicePath?.[1] || !voicePath[2]) return false;
    const voiceId = decodeURIComponent(voicePath[2]);
    if (!this.voices.some((v) => v.voice_id === voiceId)) {
      sendJson(ctx.res, 404, { detail: { status: "voice_not_found", message: `A voice with voice_id ${voiceId} was not found.` } });
      return true;
    }
    const format = ctx.url.searchParams.get("output_format") ?? DEFAULT_FORMAT;
    return voicePath[1] === "text-to-speech" ? this.textToSpeech(ctx, voiceId, format) : this.speechToSpeech(ctx, voiceId, format);
  }

  private textToSpeech(ctx: HandlerContext, voiceId: string, format: string): boolean {
    const body = (ctx.record.json ?? {}) as { text?: unknown };
    if (typeof body.text !== "string" || body.text.length === 0) {
      sendJson(ctx.res, 422, { detail: [{ loc: ["body", "text"], msg: "Field required", type: "missing" }] });
      return true;
    }
    sendBody(ctx, "audio/mpeg", fakeSpeech(voiceId, format, body.text));
    return true;
  }

  private async speechToSpeech(ctx: HandlerContext, voiceId: string, format: string): Promise<boolean> {
    const audio = ctx.record.form?.get("audio");
    if (!(audio instanceof Blob)) {
      sendJson(ctx.res, 422, { detail: [{ loc: ["body", "audio"], msg: "Field required", type: "missing" }] });
      return true;
    }
    const input = Buffer.from(await audio.arrayBuffer());
    sendBody(ctx, "audio/mpeg", Buffer.concat([Buffer.from(`FAKE-STS|${voiceId}|${format}|`), input]));
    return true;
  }

  private async speechToText(ctx: HandlerContext): Promise<boolean> {
    const file = ctx.record.form?.get("file");
    if (!(file instanceof Blob) || typeof ctx.record.form?.get("model_id") !== "string") {
      sendJson(ctx.res, 422, { detail: [{ loc: ["body", "file"], msg: "Field required", type: "missing" }] });
      return true;
    }
    const { text, durationSeconds } = fakeTranscription(Buffer.from(await file.arrayBuffer()));
    const words = text.split(" ");
    const step = durationSeconds / words.length;
    sendBody(ctx, "application/json", JSON.stringify({
      language_code: "en",
      language_probability: 1,
      text,
      words: words.map((word, i) => ({ text: word, start: i * step, end: (i + 1) * step, type: "word" })),
    }));
    return true;
  }
}
