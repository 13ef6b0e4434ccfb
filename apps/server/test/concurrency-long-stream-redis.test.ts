// CONTRACT 7: with REDIS_URL every instance enforces one concurrency limit. A Redis slot expires after
// UPSTREAM_TIMEOUT_MS + 60 s so that a crashed instance's slots free themselves; a stream that keeps sending is never
// cut (docs/api.md), so it runs past that TTL and must keep its slot while it does.
import type { ChildProcess } from "node:child_process";
import { DEFAULT_PLANS } from "@gw/config";
import { randomBase62 } from "@gw/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { fundedUser, postJson, readJson } from "./support/gateway-fixtures";
import { startRedis } from "./support/redis";
import { startEndlessChatUpstream, type EndlessUpstream } from "./support/endless-upstream";

const UPSTREAM_TIMEOUT_MS = 2_000;
const SLOT_TTL_MS = UPSTREAM_TIMEOUT_MS + 60_000;

describe("a stream longer than the Redis slot TTL", () => {
  let upstream: EndlessUpstream;
  let redis: { url: string; process: ChildProcess };
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    [upstream, redis] = await Promise.all([startEndlessChatUpstream(500), startRedis()]);
    const databaseName = `t_${randomBase62(12)}`;
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, concurrentRequests: 1 } : p));
    const env = { TEXTA_BASE_URL: upstream.url, TEXTA_API_KEY: "sk-test", REDIS_URL: redis.url, UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS) };
    a = await startTestServer({ env, databaseName, config: { plans } });
    b = await startTestServer({ env, databaseName, config: { plans } });
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    upstream?.close();
    redis?.process.kill("SIGTERM");
  });

  it("keeps its concurrency slot: another instance still answers 429 past the TTL, and 200 once the stream ends", async () => {
    const user = await fundedUser(a, 5);
    const body = { model: "textA-4", messages: [{ role: "user", content: "x" }], max_tokens: 1000 };
    const client = new AbortController();
    const stream = await postJson(a, "/v1/chat/completions", user.key, { ...body, stream: true }, {}, client.signal);
    expect(stream.status).toBe(200);
    let ended = false;
    const reading = (async () => {
      for await (const part of stream.body ?? []) void part;
    })().catch(() => undefined).finally(() => { ended = true; });

    await new Promise((r) => setTimeout(r, SLOT_TTL_MS + 3_000));
    expect(ended).toBe(false);
    const during = await postJson(b, "/v1/chat/completions", user.key, body);
    expect(during.status).toBe(429);
    expect(Number(during.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await readJson(during)).error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });

    client.abort();
    await reading;
    let after = 429;
    for (let i = 0; i < 20 && after === 429; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const res = await postJson(b, "/v1/chat/completions", user.key, body);
      after = res.status;
      await res.text();
    }
    expect(after).toBe(200);
  }, SLOT_TTL_MS + 30_000);
});
