import type { ChildProcess } from "node:child_process";
import { DEFAULT_PLANS } from "@gw/config";
import { KEY_SPEND_COLLECTION } from "@gw/billing";
import { randomBase62 } from "@gw/shared";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, credit, postJson, readJson } from "./support/gateway-fixtures";
import { startRedis } from "./support/redis";
import { sessionOf, useStandInSessions } from "./support/stand-in-sessions";

// CONTRACT 10: a key's limit holds exactly like the balance, under any concurrency and across instances.

const IMAGE = { prompt: "a kite" };
/** imageA: $0.10 a call, held and charged alike */
const IMAGE_MICROS = 100_000;

describe("a key's limit across two instances sharing one database and one Redis", () => {
  let fakes: FakeUpstreams;
  let redis: { url: string; process: ChildProcess };
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    [fakes, redis] = await Promise.all([startFakeUpstreams(), startRedis()]);
    const databaseName = `t_${randomBase62(12)}`;
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 1000, concurrentRequests: 100 } : p));
    const env = { ...fakes.env, REDIS_URL: redis.url };
    a = await startTestServer({ env, databaseName, config: { plans } });
    b = await startTestServer({ env, databaseName, config: { plans } });
    useStandInSessions(a);
    useStandInSessions(b);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await fakes.close();
    redis.process.kill("SIGTERM");
  });

  const keyWith = async (userId: string, controls: Record<string, unknown>) => {
    const res = await fetch(`${a.url}/api/keys`, {
      method: "POST", headers: { ...sessionOf(userId), "content-type": "application/json" }, body: JSON.stringify({ name: "agent", ...controls }),
    });
    expect(res.status).toBe(201);
    return (await readJson(res)) as { id: string; key: string };
  };

  it("K holds' worth of limit, 4K concurrent requests over both instances: at most K succeed, the recorded spend is within the limit", async () => {
    const K = 3;
    const userId = `usr_${randomBase62(10)}`;
    const { key, id } = await keyWith(userId, { limit: (K * IMAGE_MICROS) / 1_000_000 });
    await credit(a, userId, 10);
    // the upstream answers slowly, so that every request is in flight at once
    fakes.imageA.failNext(4 * K, { kind: "delay", ms: 300 });
    const results = await Promise.all(Array.from({ length: 4 * K }, (_, i) => postJson(i % 2 ? a : b, "/api/v1/imageA/generate", key, IMAGE)));
    const statuses = results.map((r) => r.status);
    const ok = statuses.filter((s) => s === 200).length;
    // never more than K; and no fewer either: a refusal is decided on the chain's stored head, never a stale one
    expect(ok).toBe(K);
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    for (const res of results.filter((r) => r.status === 402)) expect((await readJson(res)).error.code).toBe("key_limit_exceeded");

    // what the credits were charged and what the key's chain recorded agree, within the limit (both instances give
    // back the credits they reserved, so that the balance is the stored one)
    await Promise.all([a.app.context.ledger.flush(), b.app.context.ledger.flush()]);
    const charged = 10_000_000 - (await balanceMicros(b, userId));
    expect(charged).toBe(ok * IMAGE_MICROS);
    expect(charged).toBeLessThanOrEqual(K * IMAGE_MICROS);
    const chain = await a.db.connection.collection(KEY_SPEND_COLLECTION).find({ userId: { $regex: `^${id}:` } }).sort({ seq: -1 }).limit(1).next();
    expect(-(chain?.balanceAfter as number)).toBe(charged);
    const shown = await readJson(await fetch(`${b.url}/api/keys/${id}`, { headers: sessionOf(userId) }));
    expect(shown).toMatchObject({ limit_remaining: (K - ok) / 10, usage: { spent_period: ok / 10, requests_total: ok } });
  });

  it("a PATCH on one instance takes effect on the other at once (the revocation channel evicts the cached key)", async () => {
    const userId = `usr_${randomBase62(10)}`;
    const { key, id } = await keyWith(userId, {});
    await credit(a, userId, 1);
    expect((await postJson(b, "/api/v1/imageA/generate", key, IMAGE)).status).toBe(200);
    const patched = await fetch(`${a.url}/api/keys/${id}`, {
      method: "PATCH", headers: { ...sessionOf(userId), "content-type": "application/json" }, body: JSON.stringify({ allowed_models: ["textA-4"] }),
    });
    expect(patched.status).toBe(200);
    // Redis pub/sub delivers the eviction asynchronously: the next request on `b` sees it within moments
    let status = 0;
    for (let i = 0; i < 15 && status !== 403; i++) {
      status = (await postJson(b, "/api/v1/imageA/generate", key, IMAGE)).status;
      if (status !== 403) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(403);
  });
});
