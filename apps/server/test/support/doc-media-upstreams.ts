// Small fakes of the image and speech providers written from their public API documentation (BFL Flux, OpenAI
// Images, ElevenLabs), not from @gw/test-support: they answer the way the real services do, including their
// error bodies, so the gateway is tested against the provider rather than against its authors' assumptions.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+A8AAQUBAScY42YAAAAASUVORK5CYII=", "base64");
export const JPEG_HEAD = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

/** One answer: status, headers and body, or a function of the request. */
export type Reply = { status: number; headers?: Record<string, string>; body?: string | Buffer };
type Handler = (req: Recorded, res: ServerResponse) => Reply | undefined | Promise<Reply | undefined>;

export class DocServer {
  readonly requests: Recorded[] = [];
  /** replies queued per path prefix, taken before the default handler */
  private readonly queued: Array<{ prefix: string; reply: Reply | Handler }> = [];
  url = "";
  private server: Server | undefined;

  constructor(private readonly handler: Handler) {}

  queue(prefix: string, ...replies: Array<Reply | Handler>): void {
    for (const reply of replies) this.queued.push({ prefix, reply });
  }

  clear(): void {
    this.requests.length = 0;
    this.queued.length = 0;
  }

  async start(host = "127.0.0.1"): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const rec: Recorded = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks) };
        this.requests.push(rec);
        void (async () => {
          const at = this.queued.findIndex((q) => rec.url.startsWith(q.prefix));
          const picked = at >= 0 ? this.queued.splice(at, 1)[0]?.reply : undefined;
          const reply = typeof picked === "function" ? await picked(rec, res) : picked ?? await this.handler(rec, res);
          if (!reply || res.writableEnded) return;
          res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
          res.end(reply.body ?? "");
        })();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, host, resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://${host === "127.0.0.1" ? "127.0.0.1" : host}:${port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  ({ status, headers, body: JSON.stringify(body) });

/** OpenAI's error object: {error: {message, type, param, code}}. */
export const openAiError = (status: number, code: string | null, message: string, type = "invalid_request_error"): Reply =>
  json(status, { error: { code, message, param: null, type } });

/** ElevenLabs' error object: {detail: {status, message}}. */
export const elevenError = (status: number, code: string, message: string): Reply => json(status, { detail: { status: code, message } });

export const OPENAI_IMAGES_HANDLER: Handler = (req) => {
  if (req.url !== "/v1/images/generations") return openAiError(404, null, "Invalid URL (POST " + req.url + ")");
  const body = JSON.parse(req.body.toString()) as { n?: number; response_format?: string; prompt: string };
  const n = body.n ?? 1;
  const data = Array.from({ length: n }, (_, i) => (body.response_format === "b64_json"
    ? { b64_json: PNG_1X1.toString("base64"), revised_prompt: `${body.prompt} (revised)` }
    : { url: `https://oaidalleapiprodscus.blob.core.windows.net/private/img-${i}.png?se=2030-01-01&sig=abc`, revised_prompt: `${body.prompt} (revised)` }));
  return json(200, { created: Math.floor(Date.now() / 1000), data });
};

/** Up to `seconds` of silent MPEG-1 Layer III at 128 kbit/s, 44.1 kHz (417-byte frames of 1,152 samples), as ElevenLabs' mp3_44100_128. */
export function cbrMp3(seconds: number): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat(Array<Buffer>(Math.floor((seconds * 44_100) / 1152)).fill(frame));
}

/** An EBML element with an 8-byte size; `unknownSize` writes the "size unknown" marker of a live recording instead. */
function ebml(id: number[], payload: Buffer, unknownSize = false): Buffer {
  const size = Buffer.alloc(8);
  if (unknownSize) size.fill(0xff, 1);
  else size.writeUIntBE(payload.length, 2, 6);
  size[0] = 0x01;
  return Buffer.concat([Buffer.from(id), size, payload]);
}

const uint = (n: number, bytes = 4): Buffer => {
  const b = Buffer.alloc(bytes);
  b.writeUIntBE(n, 0, bytes);
  return b;
};

/**
 * `seconds` of Opus at 128 kbit/s in WebM as a browser's MediaRecorder writes it: segment and clusters of unknown size
 * and no Duration (it is not known while recording), so the container does not tell how long it plays.
 */
export function mediaRecorderWebm(seconds: number): Buffer {
  const header = ebml([0x1a, 0x45, 0xdf, 0xa3], Buffer.concat([ebml([0x42, 0x82], Buffer.from("webm")), ebml([0x42, 0x87], uint(4, 1)), ebml([0x42, 0x85], uint(2, 1))]));
  const info = ebml([0x15, 0x49, 0xa9, 0x66], Buffer.concat([ebml([0x2a, 0xd7, 0xb1], uint(1_000_000)), ebml([0x4d, 0x80], Buffer.from("Chrome")), ebml([0x57, 0x41], Buffer.from("Chrome"))]));
  const rate = Buffer.alloc(8);
  rate.writeDoubleBE(48_000);
  const opusHead = Buffer.alloc(19);
  opusHead.write("OpusHead", 0, "latin1");
  opusHead.set([1, 1], 8);
  opusHead.writeUInt32LE(48_000, 12);
  const track = ebml([0xae], Buffer.concat([
    ebml([0xd7], uint(1, 1)), ebml([0x83], uint(2, 1)), ebml([0x86], Buffer.from("A_OPUS")), ebml([0x63, 0xa2], opusHead),
    ebml([0xe1], Buffer.concat([ebml([0xb5], rate), ebml([0x9f], uint(1, 1))])),
  ]));
  const parts = [info, ebml([0x16, 0x54, 0xae, 0x6b], track)];
  for (let block = 0; block < seconds * 50; block++) {
    const ms = block * 20;
    if (ms % 30_000 === 0) parts.push(ebml([0x1f, 0x43, 0xb6, 0x75], ebml([0xe7], uint(ms)), true));
    const frame = Buffer.alloc(320); // 20 ms at 128 kbit/s
    frame[0] = 0xfc;
    parts.push(ebml([0xa3], Buffer.concat([Buffer.from([0x81, ((ms % 30_000) >> 8) & 0xff, (ms % 30_000) & 0xff, 0x80]), frame])));
  }
  return Buffer.concat([header, ebml([0x18, 0x53, 0x80, 0x67], Buffer.concat(parts), true)]);
}

export const VOICES = [
  { voice_id: "21m00Tcm4TlvDq8ikWAM", name: "Rachel", category: "premade" },
  { voice_id: "AZnzlk1XvdvUeBnXmlld", name: "Domi", category: "premade" },
  { voice_id: "EXAVITQu4vr4xnSDxMaL", name: "Bella", category: "premade" },
];

export const ELEVEN_HANDLER: Handler = (req) => {
  if (req.headers["xi-api-key"] !== "el-key") return elevenError(401, "invalid_api_key", "Invalid API key");
  if (req.method === "GET" && req.url.startsWith("/v1/voices")) return json(200, { voices: VOICES });
  if (req.url.startsWith("/v1/text-to-speech/") || req.url.startsWith("/v1/speech-to-speech/")) {
    const format = new URL(req.url, "http://x").searchParams.get("output_format") ?? "mp3_44100_128";
    const type = format.startsWith("mp3") ? "audio/mpeg" : format.startsWith("pcm") ? "audio/pcm" : format.startsWith("ulaw") ? "audio/basic" : "audio/ogg";
    return { status: 200, headers: { "content-type": type }, body: Buffer.from([0xff, 0xfb, 0x90, 0x64, 1, 2, 3, 4]) };
  }
  if (req.url.startsWith("/v1/speech-to-text")) {
    return json(200, {
      language_code: "en", language_probability: 0.98, text: "Hello world",
      words: [
        { text: "Hello", start: 0.1, end: 0.5, type: "word", speaker_id: "speaker_0", logprob: -0.1 },
        { text: " ", start: 0.5, end: 0.6, type: "spacing", speaker_id: "speaker_0", logprob: 0 },
        { text: "world", start: 0.6, end: 1.2, type: "word", speaker_id: "speaker_0", logprob: -0.2 },
      ],
    });
  }
  return json(404, { detail: "Not Found" });
};

export interface FluxOptions {
  /** polls answered Pending before the final status */
  pollsBeforeReady: number;
  finalStatus: string;
  /** the sample's signed URL stops working this long after it was issued */
  sampleTtlMs: number;
}

/**
 * BFL: POST {api}/v1/{model} with x-key → {id, polling_url} on a regional host; GET polling_url (x-key) →
 * {id, status, result, progress, details}; Ready's result.sample is an Azure-style signed URL on a delivery host
 * that answers 403 AuthenticationFailed once it expired.
 */
export async function startDocFlux(): Promise<{ api: DocServer; poll: DocServer; delivery: DocServer; options: FluxOptions; close(): Promise<void> }> {
  const options: FluxOptions = { pollsBeforeReady: 1, finalStatus: "Ready", sampleTtlMs: 600_000 };
  const tasks = new Map<string, { polls: number; seed: number }>();
  let counter = 0;
  const delivery = await new DocServer((req) => {
    const url = new URL(req.url, "http://x");
    if (Number(url.searchParams.get("se")) < Date.now()) {
      return { status: 403, headers: { "content-type": "application/xml" }, body: "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>AuthenticationFailed</Code><Message>Signed expiry time has to be after signed start time</Message></Error>" };
    }
    return { status: 200, headers: { "content-type": "image/jpeg" }, body: JPEG_HEAD };
  }).start("127.0.0.3");
  const poll = await new DocServer((req) => {
    if (req.headers["x-key"] !== "bfl-key") return json(403, { detail: "Not authenticated - Invalid Authentication" });
    const id = new URL(req.url, "http://x").searchParams.get("id") ?? "";
    const task = tasks.get(id);
    if (!task) return json(200, { id, status: "Task not found", result: null, progress: null, details: null });
    task.polls++;
    if (task.polls <= options.pollsBeforeReady) return json(200, { id, status: "Pending", result: null, progress: 0.5, details: null, preview: null });
    if (options.finalStatus === "Ready") {
      const se = Date.now() + options.sampleTtlMs;
      return json(200, {
        id, status: "Ready", progress: null, details: null, preview: null,
        result: { sample: `${delivery.url}/results/${id}/sample.jpeg?se=${se}&sp=r&sig=abc%3D`, prompt: "p", seed: task.seed, start_time: 1, end_time: 2, duration: 1 },
      });
    }
    const details = options.finalStatus.includes("Moderated") ? { "Moderation Reasons": ["Derivative Works"] } : null;
    return json(200, { id, status: options.finalStatus, result: null, progress: null, details });
  }).start("127.0.0.2");
  const api = await new DocServer((req) => {
    if (req.headers["x-key"] !== "bfl-key") return json(403, { detail: "Not authenticated - Invalid Authentication" });
    const body = JSON.parse(req.body.toString()) as { width?: number; height?: number; seed?: number };
    for (const side of ["width", "height"] as const) {
      const v = body[side];
      if (v !== undefined && (v < 256 || v > 1440 || v % 32 !== 0)) {
        return json(422, { detail: [{ type: "multiple_of", loc: ["body", side], msg: "Input should be a multiple of 32", input: v }] });
      }
    }
    const id = `task-${++counter}`;
    tasks.set(id, { polls: 0, seed: body.seed ?? 42 });
    return json(200, { id, polling_url: `${poll.url}/v1/get_result?id=${id}` });
  }).start();
  return {
    api, poll, delivery, options,
    async close() { await Promise.all([api.close(), poll.close(), delivery.close()]); },
  };
}
