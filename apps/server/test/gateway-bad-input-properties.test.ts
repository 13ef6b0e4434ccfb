import { request as httpRequest, STATUS_CODES } from "node:http";
import net from "node:net";
import zlib from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, DEFAULT_PLANS } from "@gw/config";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson, type FundedUser } from "./support/gateway-fixtures";

// CONTRACT 7b and 1: whatever the body, headers or framing, a gateway endpoint answers a 4xx in the spec's nested
// error shape naming the field at fault, never a 5xx or a non-JSON error; a refused request costs nothing and leaves
// no usage record; the server keeps serving.

const chatMessages = [{ role: "user", content: "hi" }];
/** A valid request per endpoint and model type; each run breaks one field of one of them. */
const TARGETS: Array<{ path: string; body: Record<string, unknown> }> = [
  { path: "/api/v1/task", body: { model: "textA-4", messages: chatMessages, max_tokens: 5, temperature: 1 } },
  { path: "/api/v1/task", body: { model: "textB-3-haiku", messages: chatMessages, max_tokens: 5, stream: true, stream_options: { include_usage: true } } },
  { path: "/api/v1/task", body: { model: "imageB-1-schnell", prompt: "a red bicycle", width: 512, height: 512, num_inference_steps: 4, guidance_scale: 3, seed: 1 } },
  { path: "/api/v1/task", body: { model: "speechvendor-tts", text: "hello", voice: "Rachel", voice_settings: { stability: 0.5, similarity_boost: 0.5 }, output_format: "mp3_44100_128" } },
  { path: "/api/v1/imageA/generate", body: { prompt: "a red bicycle", style: "raw", width: 512, height: 512, num_outputs: 1, model: "5" } },
  { path: "/api/v1/imageB.1", body: { prompt: "a red bicycle", negative_prompt: "blur", style: "anime", seed: 1, steps: 4, aspect_ratio: "16:9" } },
  { path: "/v1/chat/completions", body: { model: "textA-4", messages: chatMessages, max_tokens: 5, temperature: 1 } },
  { path: "/v1/chat/completions", body: { model: "textB-3-haiku", messages: chatMessages, max_tokens: 5, stream: true, stream_options: { include_usage: true } } },
  { path: "/v1/completions", body: { model: "text-davinci-003", prompt: "hi", max_tokens: 5 } },
  { path: "/v1/embeddings", body: { model: "text-embedding-ada-002", input: "hi" } },
  { path: "/v1/images/generations", body: { model: "imageA", prompt: "a red bicycle", n: 1, size: "512x512", response_format: "b64_json", style: "raw" } },
  { path: "/v1/images/generations", body: { model: "imageB-1-schnell", prompt: "a red bicycle", size: "512x512" } },
  { path: "/v1/audio/speech", body: { model: "speechvendor-tts", input: "hello", voice: "Rachel", response_format: "wav", speed: 1 } },
];

const NASTY: unknown[] = [
  null, true, false, 0, -1, 1e308, -1e308, 1.5, 5e-324, 2 ** 53 + 2, "", " ", "\u0000", "a\u0000b", "\ud800", "x\udc00y",
  "\u202eevil\u202c", "ﷺ".repeat(3000), "x".repeat(300_000), [], [null], ["hi"], chatMessages, {}, { $ne: null },
  { $gt: "" }, { a: { b: [1, { c: null }] } }, "true", "5", "1:1",
];
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
);

/** Paths into a body: its fields, nested ones, and fields no endpoint knows. */
function fieldPaths(body: Record<string, unknown>): string[][] {
  const paths = Object.keys(body).map((k) => [k]);
  if ("messages" in body) paths.push(["messages", "0"], ["messages", "0", "role"], ["messages", "0", "content"], ["messages", "1"]);
  if ("voice_settings" in body) paths.push(["voice_settings", "stability"]);
  if ("stream_options" in body) paths.push(["stream_options", "include_usage"]);
  paths.push(["extra_field"], ["$where"], ["constructor"]);
  return paths;
}

const mutation = fc.constantFrom(...TARGETS).chain((target) => fc.record({
  target: fc.constant(target),
  path: fc.constantFrom(...fieldPaths(target.body)),
  remove: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  value: nastyValue,
}));

function mutate(body: Record<string, unknown>, path: string[], remove: boolean, value: unknown): Record<string, unknown> {
  const copy = structuredClone(body);
  let node: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = path.at(-1) as string;
  if (remove) delete node[last];
  // defineProperty: "constructor" must become an own field, as JSON.parse would make it
  else Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** The failure, if any, of one answer to a request that broke `field`. */
function checkAnswer(status: number, contentType: string | null, text: string, field: string | undefined): string | undefined {
  if (status >= 500) return `status ${status}`;
  if (status < 400) return undefined;
  if (!contentType?.startsWith("application/json")) return `content type ${contentType}`;
  let body: { error?: { message?: unknown; type?: unknown; code?: unknown } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return "non-JSON error";
  }
  const { message, type, code } = body.error ?? {};
  if (typeof message !== "string" || typeof type !== "string" || typeof code !== "string") return "not the nested error shape";
  if (/\bat (?:\S+ )?\(?\/|node:internal/.test(text)) return "stack trace";
  if (field !== undefined && (code === "invalid_parameter" || code === "missing_required_parameter")) {
    const named = /'([^']+)'/.exec(message)?.[1]?.split(/[.[]/)[0];
    // stream: false with stream_options is stream_options' fault (OpenAI's rule)
    if (named !== field && !(field === "stream" && named === "stream_options")) return `names '${named}', not '${field}'`;
  }
  return undefined;
}

/** A request with repeated or raw headers, which fetch cannot send. */
function rawPost(url: string, path: string, headers: Array<[string, string]>, body: Buffer): Promise<{ status: number; contentType: string | null; text: string }> {
  return new Promise((resolve, reject) => {
    // an array of headers keeps repeated ones apart, and gets no Host unless given one
    const req = httpRequest(`${url}${path}`, { method: "POST", headers: [["host", new URL(url).host], ...headers].flat() }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, contentType: res.headers["content-type"] ?? null, text: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Bytes written as they are on a fresh connection (framing errors); the answer as text. */
function rawSocket(url: string, bytes: string, opts: { halfClose?: boolean } = {}): Promise<string> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("close", () => resolve(Buffer.concat(chunks).toString()));
    socket.write(bytes);
    if (opts.halfClose) socket.end();
  });
}

describe("gateway bad input (fast-check): spec errors, never a 500, never a charge", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  let user: FundedUser;
  let succeeded = 0;
  let startBalance = 0;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 100_000, concurrentRequests: 50 } : p));
    const limits = { ...DEFAULT_LIMITS, usage: { points: 100_000, duration: 60 } };
    server = await startTestServer({ env: { ...fakes.env, FLUX_POLL_INTERVAL_MS: "5" }, config: { plans, limits } });
    user = await fundedUser(server, 1000);
    startBalance = await balanceMicros(server, user.userId);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  it("every field of every endpoint replaced by each JSON type, or removed", async () => {
    await fc.assert(fc.asyncProperty(mutation, async ({ target, path, remove, value }) => {
      const res = await postJson(server, target.path, user.key, mutate(target.body, path, remove, value));
      const text = await res.text();
      if (res.status === 200) succeeded++;
      expect(checkAnswer(res.status, res.headers.get("content-type"), text, path[0])).toBeUndefined();
    }), { numRuns: 400 });
  }, 60_000);

  it("header edge cases: Authorization, Content-Type, charset, Content-Encoding, Idempotency-Key", async () => {
    const body = JSON.stringify({ model: "textA-4", messages: chatMessages, max_tokens: 5 });
    const bearer = `Bearer ${user.key}`;
    const auth = fc.constantFrom<Array<[string, string]>>(
      [["authorization", bearer]], [["authorization", `bearer ${user.key}`]], [["authorization", `Bearer  ${user.key} `]],
      [["authorization", bearer], ["authorization", "Bearer ak-live-other"]], [["authorization", "Bearer"]], [["authorization", "Basic dXNlcjpwdw=="]],
      [["authorization", `Bearer ${"k".repeat(8000)}`]], [["authorization", user.key]], [],
    );
    const contentType = fc.constantFrom<Array<[string, string]>>(
      [["content-type", "application/json"]], [["content-type", "APPLICATION/JSON; Charset=UTF-8"]], [["content-type", "application/json; charset=latin1"]],
      [["content-type", "application/json; charset=utf-16le"]], [["content-type", "application/json; charset=nonsense"]], [["content-type", "text/plain"]],
      [["content-type", "multipart/form-data"]], [["content-type", "application/x-www-form-urlencoded"]], [["content-type", ""]], [],
      [["content-type", "application/json"], ["content-type", "text/plain"]],
    );
    const encoding = fc.constantFrom("none", "gzip", "deflate", "br", "gzip-mislabelled", "x-unknown", "gzip, gzip", "truncated-gzip");
    const idempotency = fc.constantFrom<Array<[string, string]>>([], [["idempotency-key", ""]], [["idempotency-key", "k".repeat(255)]], [["idempotency-key", "k".repeat(256)]], [["idempotency-key", "cl\u00e9"]], [["idempotency-key", "a"], ["idempotency-key", "b"]]);
    await fc.assert(fc.asyncProperty(auth, contentType, encoding, idempotency, fc.boolean(), async (a, ct, enc, idem, chunked) => {
      let bytes = Buffer.from(body);
      const headers: Array<[string, string]> = [...a, ...ct, ...idem.map(([k, v]): [string, string] => [k, v === "" ? v : `${v}-${Math.random()}`])];
      if (enc === "gzip" || enc === "truncated-gzip") bytes = zlib.gzipSync(bytes).subarray(0, enc === "gzip" ? undefined : 12);
      if (enc === "deflate") bytes = zlib.deflateSync(bytes);
      if (enc === "br") bytes = zlib.brotliCompressSync(bytes);
      if (enc !== "none") headers.push(["content-encoding", enc.replace(/-(mislabelled|truncated)$|^truncated-/, "")]);
      if (!chunked) headers.push(["content-length", String(bytes.length)]);
      const res = await rawPost(server.url, "/v1/chat/completions", headers, bytes);
      if (res.status === 200) succeeded++;
      expect(checkAnswer(res.status, res.contentType, res.text, undefined)).toBeUndefined();
    }), { numRuns: 120 });
  });

  it("multipart task bodies for every model type with broken fields", async () => {
    const wav = Buffer.concat([Buffer.from("RIFF\x24\x7d\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x7d\x00\x00", "latin1"), Buffer.alloc(32_000)]);
    const forms: Array<Record<string, string>> = [
      { model: "speechvendor-stt" },
      { model: "speechvendor-sts", voice: "Rachel", voice_settings: '{"stability":0.5,"similarity_boost":0.5}' },
      { model: "speechvendor-tts", text: "hello", voice: "Rachel", output_format: "mp3_44100_128" },
      { model: "textA-4", messages: JSON.stringify(chatMessages), max_tokens: "5", stream: "false" },
      { model: "imageB-1-dev", prompt: "a red bicycle", width: "512", seed: "7" },
    ];
    const strings = ["", " ", "null", "true", "-1", "1e308", "1.5", "0x10", "NaN", "[]", "{}", "\u0000", "\ud800", '{"stability":"x"}', "[{\"role\":1}]", "x".repeat(20_000)];
    const brokenForm = fc.record({
      form: fc.constantFrom(...forms),
      field: fc.constantFrom("model", "voice", "voice_settings", "text", "messages", "max_tokens", "stream", "width", "seed", "output_format", "extra"),
      value: fc.oneof(fc.constantFrom(...strings), fc.string({ unit: "binary", maxLength: 20 })),
      how: fc.constantFrom("replace", "remove", "duplicate"),
      audio: fc.constantFrom("wav", "none", "empty", "text/plain", "two", "other-field"),
    });
    await fc.assert(fc.asyncProperty(brokenForm, async ({ form, field, value, how, audio }) => {
      const data = new FormData();
      for (const [name, v] of Object.entries(form)) {
        if (name === field && how === "remove") continue;
        data.append(name, name === field && how === "replace" ? value : v);
        if (name === field && how === "duplicate") data.append(name, value);
      }
      if (!(field in form) && how !== "remove") data.append(field, value);
      const file = (type: string, bytes: Buffer) => new Blob([bytes], { type });
      if (audio === "wav" || audio === "two") data.append("audio", file("audio/wav", wav), "a.wav");
      if (audio === "two") data.append("audio", file("audio/wav", wav), "b.wav");
      if (audio === "empty") data.append("audio", file("audio/wav", Buffer.alloc(0)), "a.wav");
      if (audio === "text/plain") data.append("audio", file("text/plain", Buffer.from("not audio")), "a.txt");
      if (audio === "other-field") data.append("file", file("audio/wav", wav), "a.wav");
      const res = await fetch(`${server.url}/api/v1/task`, { method: "POST", headers: { authorization: `Bearer ${user.key}` }, body: data });
      const text = await res.text();
      if (res.status === 200) succeeded++;
      expect(checkAnswer(res.status, res.headers.get("content-type"), text, undefined)).toBeUndefined();
    }), { numRuns: 120 });
  });

  it("GET /api/usage query strings and GET /v1/models/{id} with any text", async () => {
    const piece = fc.oneof(
      fc.constantFrom("", "0", "-1", "1e3", "0x10", "99999999999999999999", "1.5", "%00", "%E0%A4%A", "%", "2026-02-30", "2026-01-01T25:00:00Z",
        "+275760-09-13", "0000-01-01", "2026-11-01T12:00:00+14:00", "textA-4", "__proto__", "constructor", "[]", "{\"$ne\":null}"),
      fc.string({ unit: "binary", maxLength: 30 }).map(encodeURIComponent),
    );
    const query = fc.array(fc.tuple(fc.constantFrom("page", "per_page", "from", "to", "model", "page[]", "model[$ne]", "x"), piece), { maxLength: 5 })
      .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join("&"));
    const headers = { authorization: `Bearer ${user.key}` };
    await fc.assert(fc.asyncProperty(query, piece, async (q, id) => {
      const usage = await fetch(`${server.url}/api/usage?${q}`, { headers });
      expect(checkAnswer(usage.status, usage.headers.get("content-type"), await usage.text(), undefined)).toBeUndefined();
      const model = await fetch(`${server.url}/v1/models/${id}`, { headers });
      expect(checkAnswer(model.status, model.headers.get("content-type"), await model.text(), undefined)).toBeUndefined();
    }), { numRuns: 150 });
  });

  it("framing errors Node answers before any route runs come in the spec's shape too", async () => {
    const head = (extra: string) => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.key}\r\nContent-Type: application/json\r\n${extra}\r\n`;
    const cases: Array<[string, string, boolean, number, string]> = [
      ["a body cut short", `${head("Content-Length: 500\r\n")}{"model":`, true, 400, "invalid_parameter"],
      ["a broken chunk", `${head("Transfer-Encoding: chunked\r\n")}zz\r\n{}\r\n0\r\n\r\n`, false, 400, "invalid_parameter"],
      ["headers over 16 KB", head(`Idempotency-Key: ${"k".repeat(20_000)}\r\nContent-Length: 0\r\n`), false, 431, "headers_too_large"],
      ["an unknown Expect", head("Expect: something-else\r\nContent-Length: 0\r\n"), false, 417, "expectation_failed"],
      ["an HTTP/1.1 request without Host", `POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer ${user.key}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`, false, 400, "invalid_parameter"],
    ];
    for (const [what, bytes, halfClose, status, code] of cases) {
      const answer = await rawSocket(server.url, bytes, { halfClose });
      const [headText = "", bodyText = ""] = answer.split("\r\n\r\n");
      expect(headText.split("\r\n")[0], what).toBe(`HTTP/1.1 ${status} ${STATUS_CODES[status]}`);
      expect(headText, what).toMatch(/content-type: application\/json/i);
      expect(headText, what).toMatch(/x-request-id: req_/i);
      expect(JSON.parse(bodyText), what).toMatchObject({ error: { type: "invalid_request_error", code } });
    }
  });

  it("a message that is one 300,000-character word is answered at once (the tokenizer was quadratic on it)", async () => {
    const started = Date.now();
    // textB-2: its 100,000-token context holds the word's 37,500 tokens
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textB-2", messages: [{ role: "user", content: "x".repeat(300_000) }], max_tokens: 5 });
    expect(res.status).toBe(200);
    succeeded++;
    await res.text();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("charged exactly the successful requests, each with one usage record, and still serving", async () => {
    const usage = await readJson(await fetch(`${server.url}/api/usage?per_page=1`, { headers: { authorization: `Bearer ${user.key}` } }));
    expect(usage.pagination.total).toBe(succeeded);
    expect(startBalance - (await balanceMicros(server, user.userId))).toBe(Math.round(usage.totals.cost * 1e6));
    const res = await postJson(server, "/v1/chat/completions", user.key, { model: "textA-4", messages: chatMessages, max_tokens: 5 });
    expect(res.status).toBe(200);
  });
});
