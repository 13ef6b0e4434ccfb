import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson } from "./support/gateway-fixtures";
import { rawPost, type RawAnswer } from "./support/raw-post";

// A client that sends its headers and then stalls the body holds its request, and the account's concurrency slot
// (taken before the body is read), until the body idle timeout: then 408 request_timeout and the connection closes.

// long enough that a loaded machine's event-loop lag neither times out the trickling body below nor lets the
// stalled requests time out before the test's third request checks their slots
const IDLE_MS = 1_500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const headOf = (path: string, key: string, length: number, extra = "") =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

describe("a request body that stops arriving", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    server = await startTestServer({ env: { ...fakes.env, BODY_IDLE_TIMEOUT_MS: String(IDLE_MS) } });
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  const chat = JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "hello" }], max_tokens: 5 });

  for (const path of ["/v1/chat/completions", "/V1/chat/completions/", "/api/v1/task"]) {
    it(`${path}: 408 request_timeout after the idle timeout, the connection closed, the slot freed, nothing charged`, async () => {
      const user = await fundedUser(server, 5);
      const half = Buffer.from(chat.slice(0, 20));
      // the free plan's 2 concurrent requests, both stalled
      const plans = server.app.context.plans;
      const planFor = plans.planFor.bind(plans);
      let admitted = 0;
      plans.planFor = async (userId) => {
        try {
          return await planFor(userId);
        } finally {
          if (userId === user.userId) admitted++;
        }
      };
      let stalled: Promise<RawAnswer>[];
      try {
        stalled = [rawPost(server.url, headOf(path, user.key, chat.length), [half]), rawPost(server.url, headOf(path, user.key, chat.length), [half])];
        // until both are past their plan lookup, i.e. hold their slots (a fixed wait was too short on a loaded machine)
        await vi.waitFor(() => expect(admitted).toBe(2), { timeout: IDLE_MS / 2, interval: 10 });
        await sleep(50);
      } finally {
        plans.planFor = planFor;
      }
      const refused = await postJson(server, path, user.key, JSON.parse(chat));
      expect(refused.status).toBe(429);
      for (const answer of await Promise.all(stalled)) {
        expect(answer.status).toBe(408);
        expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
        expect(answer.headers["x-request-id"]).toMatch(/^req/);
        expect(answer.headers["x-ratelimit-limit"]).toBe("20");
        expect(answer.headers.connection).toBe("close");
        expect(JSON.parse(answer.body)).toEqual({ error: { message: `The request body was not received in time: nothing arrived for ${IDLE_MS} ms.`, type: "invalid_request_error", code: "request_timeout" } });
        expect(answer.waitedMs).toBeGreaterThanOrEqual(IDLE_MS - 50);
        expect(answer.waitedMs).toBeLessThan(IDLE_MS + 2_000);
        expect(answer.closed).toBe(true);
      }
      expect(await balanceMicros(server, user.userId)).toBe(5_000_000);
      const after = await postJson(server, path, user.key, JSON.parse(chat));
      expect(after.status).toBe(200);
      await after.arrayBuffer();
    });
  }

  it("a gzip body (read by body-parser) that stalls: 408 the same", async () => {
    const user = await fundedUser(server, 5);
    const gz = gzipSync(chat);
    const answer = await rawPost(server.url, headOf("/v1/chat/completions", user.key, gz.length, "Content-Encoding: gzip\r\n"), [gz.subarray(0, 10)]);
    expect(answer.status).toBe(408);
    expect((JSON.parse(answer.body) as { error: { code: string } }).error.code).toBe("request_timeout");
  });

  it("a multipart upload that stalls: 408 the same", async () => {
    const user = await fundedUser(server, 5);
    const boundary = "----stall";
    const start = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nspeechvendor-stt\r\n--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF`);
    const head = `POST /api/v1/task HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n`;
    const answer = await rawPost(server.url, head, [start]);
    expect(answer.status).toBe(408);
    expect((JSON.parse(answer.body) as { error: { code: string } }).error.code).toBe("request_timeout");
  });

  it("a body that keeps arriving, slower in all than the idle timeout but never idle that long, is read and answered", async () => {
    const user = await fundedUser(server, 5);
    const bytes = Buffer.from(chat);
    const parts = [bytes.subarray(0, 30), bytes.subarray(30, 60), bytes.subarray(60)];
    const answer = await rawPost(server.url, headOf("/v1/chat/completions", user.key, bytes.length, "Connection: close\r\n"), parts, IDLE_MS / 2);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ object: "chat.completion" });
  });

  it("the wait for a non-streamed upstream answer is not bounded by the body timeout", async () => {
    const user = await fundedUser(server, 5);
    fakes.textA.latencyMs = IDLE_MS * 2;
    try {
      const res = await postJson(server, "/v1/chat/completions", user.key, JSON.parse(chat));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ object: "chat.completion" });
    } finally {
      fakes.textA.latencyMs = 0;
    }
  });
});
