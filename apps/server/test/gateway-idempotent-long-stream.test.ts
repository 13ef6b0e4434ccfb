import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson } from "./support/gateway-fixtures";

/**
 * An OpenAI legacy completions upstream that writes its stream one event per `step()`, as a slow model does: the
 * test decides how much time passes between two events.
 */
class SteppedCompletions {
  readonly server: Server;
  requests = 0;
  private res: ServerResponse | undefined;
  private events: string[] = [];

  constructor() {
    this.server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        this.requests++;
        const head = { id: "cmpl-upstream", object: "text_completion", created: 1_700_000_000, model: "text-davinci-003" };
        const chunk = (text: string, finish: string | null) => `data: ${JSON.stringify({ ...head, choices: [{ text, index: 0, logprobs: null, finish_reason: finish }] })}\n\n`;
        const events = [chunk("one", null), chunk(" two", null), chunk(" three", null), chunk(" four", null), chunk(" five", null), chunk("", "stop"),
          `data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } })}\n\n`, "data: [DONE]\n\n"];
        if (!this.res) this.events = events;
        res.writeHead(200, { "content-type": "text/event-stream" });
        // a second call while the first still streams (what the test checks never happens) is answered at once
        if (this.res) res.end(events.join(""));
        else this.res = res;
      });
    });
  }

  /** the request arrived and its answer waits for `step()` */
  get answering(): boolean {
    return this.res !== undefined;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** writes the next event; the last one ends the answer */
  step(): void {
    const event = this.events.shift();
    if (event !== undefined) this.res?.write(event);
    if (this.events.length === 0) this.res?.end();
  }
}

const SECOND = 1_000;
const decoder = new TextDecoder();

describe("Idempotency-Key on a stream that runs longer than the pending TTL", () => {
  let upstream: SteppedCompletions;
  let server: TestServer;

  beforeAll(async () => {
    upstream = new SteppedCompletions();
    await new Promise<void>((resolve) => upstream.server.listen(0, "127.0.0.1", resolve));
    server = await startTestServer({ env: { TEXTA_BASE_URL: upstream.url, TEXTA_API_KEY: "k", UPSTREAM_MAX_RETRIES: "0" } });
  });
  afterAll(async () => {
    await server.close();
    upstream.server.closeAllConnections();
    await new Promise<void>((resolve) => upstream.server.close(() => resolve()));
  });

  it("a duplicate while it still streams gets 409, not a second upstream call and charge; the finished stream replays", async () => {
    const user = await fundedUser(server, 1);
    const body = { model: "text-davinci-003", prompt: "count to five", max_tokens: 10, stream: true };
    const headers = { "idempotency-key": "long-stream" };
    // the status line leaves with the first output, so the answer starts once the upstream wrote its first event
    const answer = postJson(server, "/v1/completions", user.key, body, headers);
    while (!upstream.answering) await new Promise((resolve) => setTimeout(resolve, 10));
    upstream.step();
    const first = await answer;
    expect(first.status).toBe(200);
    const reader = (first.body as ReadableStream<Uint8Array>).getReader();
    let streamed = decoder.decode((await reader.read()).value);
    // A slow model: a minute between events, four minutes in all. A stream that keeps sending is never cut, so it
    // outlives UPSTREAM_TIMEOUT_MS + 60 s, the age at which a pending record counts as left by a crashed instance.
    const pendingTtlMs = server.config.upstream.requestTimeoutMs + 60 * SECOND;
    for (let elapsed = 0; elapsed <= pendingTtlMs; elapsed += 60 * SECOND) {
      server.clock.advance(60 * SECOND);
      upstream.step();
      streamed += decoder.decode((await reader.read()).value);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const duplicate = await postJson(server, "/v1/completions", user.key, body, headers);
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect((await duplicate.json() as { error: { code: string } }).error.code).toBe("conflict");
    expect(upstream.requests).toBe(1);

    for (let i = 0; i < 8; i++) upstream.step();
    for (let read = await reader.read(); !read.done; read = await reader.read()) streamed += decoder.decode(read.value);
    expect(streamed.endsWith("data: [DONE]\n\n")).toBe(true);
    const charged = 1_000_000 - (await balanceMicros(server, user.userId));
    expect(charged).toBe(3 + 2 * 5);
    const replay = await postJson(server, "/v1/completions", user.key, body, headers);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe(streamed);
    expect(upstream.requests).toBe(1);
    expect(1_000_000 - (await balanceMicros(server, user.userId))).toBe(charged);
  });
});
