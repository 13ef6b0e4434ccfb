import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson } from "./support/gateway-fixtures";
import { rawPost } from "./support/raw-post";

// A body trickled in, never idle for the idle timeout, still has to arrive within BODY_TIMEOUT_MS: otherwise 408
// request_timeout, the connection closed and the account's concurrency slot freed, nothing charged.

const IDLE_MS = 1_500;
const TOTAL_MS = 3_000;
const GAP_MS = 400;

describe("a request body that trickles in", () => {
  let fakes: FakeUpstreams;
  let server: TestServer;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    server = await startTestServer({ env: { ...fakes.env, BODY_IDLE_TIMEOUT_MS: String(IDLE_MS), BODY_TIMEOUT_MS: String(TOTAL_MS) } });
  });
  afterAll(async () => {
    await server.close();
    await fakes.close();
  });

  it("is cut at the total deadline with 408 request_timeout, the slot freed, nothing charged", async () => {
    const user = await fundedUser(server, 5);
    const body = Buffer.from(JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "hello" }], max_tokens: 5 }));
    // 16 pieces GAP_MS apart: never idle for IDLE_MS, in all longer than TOTAL_MS
    const pieces = Array.from({ length: 16 }, (_, i) => body.subarray(Math.floor((i * body.length) / 16), Math.floor(((i + 1) * body.length) / 16)));
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const started = Date.now();
    const answer = await rawPost(server.url, head, pieces, GAP_MS);
    const tookMs = Date.now() - started;
    expect(answer.status).toBe(408);
    expect(answer.headers.connection).toBe("close");
    expect(JSON.parse(answer.body)).toEqual({
      error: { message: `The request body was not received in time: it took longer than ${TOTAL_MS / 1000} s.`, type: "invalid_request_error", code: "request_timeout" },
    });
    expect(tookMs).toBeGreaterThanOrEqual(TOTAL_MS - 50);
    expect(tookMs).toBeLessThan(16 * GAP_MS);
    expect(await balanceMicros(server, user.userId)).toBe(5_000_000);
    // the slot is free again: the free plan's next request is admitted and answered
    const after = await postJson(server, "/v1/chat/completions", user.key, JSON.parse(body.toString()));
    expect(after.status).toBe(200);
    await after.arrayBuffer();
  });
});
