import http from "node:http";
import { gzipSync } from "node:zlib";
import { DEFAULT_PLANS } from "@gw/config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { fundedUser, type FundedUser } from "./support/gateway-fixtures";

// The hot routes are served by DirectRoutes (exact path) and, for other spellings of the same path, by the
// Express router. Both must answer every request alike: these requests go to both and compare the answers.

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A raw request, so headers (chunked, content-length, encodings) are exactly what the test says. */
function send(url: string, path: string, headers: Record<string, string>, body: Buffer | string | undefined, opts: { chunked?: boolean } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    if (body !== undefined && opts.chunked) {
      const buf = Buffer.from(body);
      const half = Math.floor(buf.length / 2);
      req.write(buf.subarray(0, half));
      req.end(buf.subarray(half));
    } else {
      req.end(body);
    }
  });
}

const errorCode = (a: Answer): string | undefined => {
  try {
    return (JSON.parse(a.body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
};

describe("direct routes answer exactly as the Express router does", () => {
  let server: TestServer;
  let fakes: FakeUpstreams;
  let user: FundedUser;
  const DIRECT = "/v1/chat/completions";
  const ROUTER = "/V1/chat/completions/";

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    // plan limits high enough that the cases below never meet them (limits are counted all the same)
    const plans = DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 10_000 }));
    server = await startTestServer({ env: fakes.env, config: { plans } });
    user = await fundedUser(server, 100);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  const json = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${user.key}`, "content-type": "application/json", ...extra });
  const valid = JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "hello" }], max_tokens: 5 });

  const cases: Array<{ name: string; headers: () => Record<string, string>; body?: Buffer | string; chunked?: boolean; status: number; code?: string }> = [
    { name: "a valid request", headers: () => json(), body: valid, status: 200 },
    { name: "a valid chunked request", headers: () => json(), body: valid, chunked: true, status: 200 },
    { name: "charset=utf-8 and a BOM", headers: () => json({ "content-type": "application/json; charset=utf-8" }), body: `\uFEFF${valid}`, status: 200 },
    { name: "a gzip body (read by body-parser)", headers: () => json({ "content-encoding": "gzip" }), body: gzipSync(valid), status: 200 },
    // `utf8` is a label of UTF-8 (WHATWG Encoding), not another charset
    { name: "charset=utf8", headers: () => json({ "content-type": "application/json; charset=utf8" }), body: valid, status: 200 },
    { name: "charset=UTF8, gzip (read by body-parser)", headers: () => json({ "content-type": "application/json; charset=\"UTF8\"", "content-encoding": "gzip" }), body: gzipSync(valid), status: 200 },
    { name: "an empty body", headers: () => json(), body: "", status: 400, code: "missing_required_parameter" },
    { name: "invalid JSON", headers: () => json(), body: "{\"model\":", status: 400, code: "invalid_json" },
    { name: "a JSON string at the top", headers: () => json(), body: "\"text\"", status: 400, code: "invalid_json" },
    { name: "invalid UTF-8", headers: () => json(), body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), status: 400, code: "invalid_json" },
    { name: "nesting deeper than 100", headers: () => json(), body: `${"[".repeat(150)}${"]".repeat(150)}`, status: 400, code: "invalid_parameter" },
    { name: "over 1 MB with Content-Length", headers: () => json(), body: JSON.stringify({ model: "textA-4", pad: "x".repeat(1_100_000) }), status: 413, code: "payload_too_large" },
    { name: "over 1 MB chunked", headers: () => json(), body: JSON.stringify({ model: "textA-4", pad: "x".repeat(1_100_000) }), chunked: true, status: 413, code: "payload_too_large" },
    { name: "text/plain", headers: () => json({ "content-type": "text/plain" }), body: valid, status: 415, code: "unsupported_media_type" },
    { name: "a latin1 charset (read by body-parser)", headers: () => json({ "content-type": "application/json; charset=latin1" }), body: valid, status: 400, code: "invalid_parameter" },
    // JSON between systems is UTF-8 (RFC 8259 8.1): a UTF-16 body is refused as latin1 is, whatever its text (it was read
    // when its text was ASCII, whose UTF-16 bytes pass as UTF-8, and refused as "not valid UTF-8" otherwise)
    { name: "a UTF-16 charset, ASCII text", headers: () => json({ "content-type": "application/json; charset=utf-16le" }), body: Buffer.from(valid, "utf16le"), status: 400, code: "invalid_parameter" },
    { name: "a UTF-16 charset with its BOM", headers: () => json({ "content-type": "application/json; charset=utf-16" }), body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(valid, "utf16le")]), status: 400, code: "invalid_parameter" },
    { name: "a UTF-32 charset, gzip", headers: () => json({ "content-type": "application/json; charset=\"UTF-32\"", "content-encoding": "gzip" }), body: gzipSync(Buffer.from(valid, "utf16le")), status: 400, code: "invalid_parameter" },
    { name: "no key", headers: () => ({ "content-type": "application/json" }), body: valid, status: 401, code: "invalid_api_key" },
    { name: "a missing model", headers: () => json(), body: JSON.stringify({ messages: [] }), status: 400, code: "missing_required_parameter" },
  ];

  for (const c of cases) {
    it(`${c.name}: ${c.status}${c.code ? ` ${c.code}` : ""} on both paths`, async () => {
      const direct = await send(server.url, DIRECT, c.headers(), c.body, { chunked: c.chunked });
      const routed = await send(server.url, ROUTER, c.headers(), c.body, { chunked: c.chunked });
      expect(direct.status).toBe(c.status);
      expect(routed.status).toBe(c.status);
      if (c.code) expect(errorCode(direct)).toBe(c.code);
      expect(errorCode(direct)).toBe(errorCode(routed));
      if (c.status !== 200) expect(JSON.parse(direct.body)).toEqual(JSON.parse(routed.body));
      for (const a of [direct, routed]) {
        expect(a.headers["content-type"]).toBe("application/json; charset=utf-8");
        expect(a.headers["x-request-id"]).toMatch(/^req/);
        expect(a.headers["x-content-type-options"]).toBe("nosniff");
        expect(a.headers["x-ratelimit-limit"]).toBeDefined();
        expect(Number(a.headers["content-length"])).toBe(Buffer.byteLength(a.body));
      }
    });
  }

  it("a query string still takes the direct route, and HEAD of a GET route goes through the router", async () => {
    const withQuery = await send(server.url, `${DIRECT}?x=1`, json(), valid);
    expect(withQuery.status).toBe(200);
    const head = await fetch(`${server.url}/v1/models`, { method: "HEAD", headers: { authorization: `Bearer ${user.key}` } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });
});
