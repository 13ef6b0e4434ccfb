import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, type FundedUser } from "./support/gateway-fixtures";

interface Outcome {
  /** whether the server asked for the body (100 Continue) */
  continued: boolean;
  status: number;
  body: string;
}

/** A POST with `Expect: 100-continue` that sends its body only once the server gives leave, as curl does. */
function postExpecting(url: string, path: string, headers: Record<string, string>, body: Buffer): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = http.request(`${url}${path}`, {
      method: "POST", agent: false, headers: { ...headers, expect: "100-continue", "content-length": String(body.length) },
    });
    req.on("continue", () => {
      continued = true;
      req.end(body);
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ continued, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.flushHeaders();
  });
}

describe("Expect: 100-continue", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;
  let user: FundedUser;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    server = await startTestServer({ env: fakes.env });
    user = await fundedUser(server, 1);
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  const chat = Buffer.from(JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "hello" }], max_tokens: 5 }));

  it("a request refused before its body is read is answered without asking for the upload", async () => {
    const refused = await postExpecting(server.url, "/v1/chat/completions", { authorization: "Bearer sk-not-a-real-key", "content-type": "application/json" }, chat);
    expect(refused).toMatchObject({ continued: false, status: 401 });
    expect(JSON.parse(refused.body).error.code).toBe("invalid_api_key");
    // a 30 MB audio upload with a bad key: the answer comes without the 30 MB
    const boundary = "b0undary";
    const form = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nspeechvendor-stt\r\n--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="a.mp3"\r\nContent-Type: audio/mpeg\r\n\r\n`), Buffer.alloc(30_000_000), Buffer.from(`\r\n--${boundary}--\r\n`)]);
    const upload = await postExpecting(server.url, "/api/v1/task", { authorization: "Bearer sk-not-a-real-key", "content-type": `multipart/form-data; boundary=${boundary}` }, form);
    expect(upload).toMatchObject({ continued: false, status: 401 });
  });

  it("an accepted request gets 100 Continue when its body is read, JSON and multipart alike", async () => {
    const before = await balanceMicros(server, user.userId);
    const ok = await postExpecting(server.url, "/v1/chat/completions", { authorization: `Bearer ${user.key}`, "content-type": "application/json" }, chat);
    expect(ok).toMatchObject({ continued: true, status: 200 });
    expect(JSON.parse(ok.body).object).toBe("chat.completion");
    expect(await balanceMicros(server, user.userId)).toBeLessThan(before);

    const boundary = "b0undary";
    const form = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nspeechvendor-tts\r\n--${boundary}\r\nContent-Disposition: form-data; name="text"\r\n\r\nhello\r\n--${boundary}\r\nContent-Disposition: form-data; name="voice"\r\n\r\nRachel\r\n--${boundary}--\r\n`);
    const speech = await postExpecting(server.url, "/api/v1/task", { authorization: `Bearer ${user.key}`, "content-type": `multipart/form-data; boundary=${boundary}` }, form);
    expect(speech).toMatchObject({ continued: true, status: 200 });
  });
});
