import type { ChildProcess } from "node:child_process";
import { DEFAULT_PLANS } from "@gw/config";
import type { ApiKeyService } from "@gw/auth";
import { randomBase62 } from "@gw/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, fundedUser, postJson, readJson } from "./support/gateway-fixtures";
import { startRedis } from "./support/redis";

describe("two gateway instances sharing one database and one Redis", () => {
  let fakes: FakeUpstreams;
  let redis: { url: string; process: ChildProcess };
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    [fakes, redis] = await Promise.all([startFakeUpstreams(), startRedis()]);
    const databaseName = `t_${randomBase62(12)}`;
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 30, concurrentRequests: 100 } : p));
    const env = { ...fakes.env, REDIS_URL: redis.url };
    a = await startTestServer({ env, databaseName, config: { plans } });
    b = await startTestServer({ env, databaseName, config: { plans } });
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await fakes.close();
    redis.process.kill("SIGTERM");
  });

  it("one balance: 4K concurrent requests spread over both instances, at most K succeed, ledger consistent", async () => {
    const K = 4;
    const user = await fundedUser(a, 0);
    await a.app.context.ledger.credit(user.userId, K * 100_000, { kind: "adjustment", idempotencyKey: `two-${user.userId}` });
    const results = await Promise.all(Array.from({ length: 4 * K }, (_, i) => postJson(i % 2 ? a : b, "/api/v1/imageA/generate", user.key, { prompt: "a kite" })));
    const statuses = results.map((r) => r.status);
    const ok = statuses.filter((s) => s === 200).length;
    expect(ok).toBeGreaterThan(0);
    expect(ok).toBeLessThanOrEqual(K);
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    const balance = await balanceMicros(b, user.userId);
    expect(balance).toBe((K - ok) * 100_000);
    expect((await b.app.context.ledger.verify(user.userId)).ok).toBe(true);
  });

  it.each([0.5, 1])("a balance of $%s, up to one reservation chunk, serves requests alternating between the instances (the one that served last gives the rest back)", async (dollars) => {
    const user = await fundedUser(a, dollars);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await postJson(i % 2 ? b : a, "/v1/chat/completions", user.key, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 10 });
      statuses.push(res.status);
      // a few of the ledger's 200 ms flushes; the test clock stands still, so the user never counts as idle
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    expect(statuses).toEqual([200, 200, 200, 200]);
    // four answers of 1 prompt word and 2 reply words at the fake: 1 + 2 * 2 micro-dollars each
    expect(await balanceMicros(b, user.userId)).toBe(dollars * 1_000_000 - 4 * 5);
  });

  it("a balance under one reservation chunk serves back-to-back requests alternating between the instances: none is 402 while the balance covers it", async () => {
    // $1.05 for ten $0.10 images: the first instance reserves all of it, and the other one's request comes before
    // that instance's next flush gives the rest back
    const user = await fundedUser(a, 1.05);
    const refused: unknown[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await postJson(i % 2 ? b : a, "/api/v1/imageA/generate", user.key, { prompt: "a kite" });
      if (res.status !== 200) refused.push({ i, status: res.status, body: await readJson(res) });
      else await res.arrayBuffer();
    }
    expect(refused).toEqual([]);
    const next = await postJson(b, "/api/v1/imageA/generate", user.key, { prompt: "a kite" });
    expect(next.status).toBe(402);
    expect((await readJson(next)).error).toMatchObject({ code: "insufficient_credits", current_balance: 0.05, required_amount: 0.1 });
    expect(await balanceMicros(b, user.userId)).toBe(50_000);
    expect((await b.app.context.ledger.verify(user.userId)).ok).toBe(true);
  });

  it("one requests-per-minute limit across both instances", async () => {
    const user = await fundedUser(a, 1);
    const statuses: number[] = [];
    for (let i = 0; i < 34; i++) {
      const res = await fetch(`${(i % 2 ? a : b).url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } });
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.slice(30)).toEqual([429, 429, 429, 429]);
  });

  it("one concurrency limit across both instances, whatever X-Request-Id the client repeats", async () => {
    const user = await fundedUser(a, 5);
    for (const server of [a, b]) {
      const plans = server.app.context.plans;
      const planFor = plans.planFor.bind(plans);
      plans.planFor = async (userId) => ({ ...(await planFor(userId)), ...(userId === user.userId ? { concurrentRequests: 2 } : {}) });
    }
    fakes.textA.failNext(6, { kind: "delay", ms: 600 });
    const body = { model: "textA-4", messages: [{ role: "user", content: "x" }], max_tokens: 10 };
    const results = await Promise.all([a, b, a, b, a, b].map((s) => postJson(s, "/v1/chat/completions", user.key, body, { "x-request-id": "same-id-123" })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
  });

  it("a credit reaching an instance declared dead while it was silent does not give its swept reservation back again", async () => {
    const user = await fundedUser(a, 10);
    const credits = async (server: TestServer) => (await readJson(await fetch(`${server.url}/api/billing/credits`, { headers: { authorization: `Bearer ${user.key}` } }))).balance;
    expect((await postJson(a, "/api/v1/imageA/generate", user.key, { prompt: "a kite" })).status).toBe(200);
    await a.app.context.ledger.flushCharges(user.userId);
    b.clock.advance(125_000);
    expect(await b.app.context.ledger.releaseExpiredHolds()).toBeGreaterThanOrEqual(1);
    expect(await credits(b)).toBe(9.9);
    // `a` runs again and, before any flush or beat, a payment (a webhook on `a`) credits the user: the credit first gives
    // back what `a` reserved, which the sweep already gave back.
    a.clock.advance(121_000);
    await a.app.context.ledger.credit(user.userId, 1_000_000, { kind: "adjustment", idempotencyKey: `silent-credit-${randomBase62(8)}` });
    expect(await credits(b)).toBe(10.9);
    expect(await credits(a)).toBe(10.9);
  });

  it("an instance declared dead while it was silent never gives its swept reservation back a second time", async () => {
    const user = await fundedUser(a, 10);
    const credits = async (server: TestServer) => (await readJson(await fetch(`${server.url}/api/billing/credits`, { headers: { authorization: `Bearer ${user.key}` } }))).balance;
    expect((await postJson(a, "/api/v1/imageA/generate", user.key, { prompt: "a kite" })).status).toBe(200);
    await a.app.context.ledger.flushCharges(user.userId);
    expect(await credits(a)).toBe(9.9);
    // `a` reserved a chunk of the user's credits for later requests, then fell silent longer than the dead-instance
    // limit (a stall, or the database out of its reach), so `b` released that reservation...
    // `b`'s clock moves on past that limit while `a`'s stands still, so whatever `a`'s own heartbeat timer writes
    // meanwhile (its clock's time, started before `b`'s) `a` counts as dead to `b`.
    const [hold] = await b.app.context.ledger.entries(user.userId, { kinds: ["hold"] });
    const instanceId = hold?.reservationId?.replace(/^rsv:/, "");
    expect(instanceId).toBeDefined();
    b.clock.advance(125_000);
    expect(await b.app.context.ledger.releaseExpiredHolds()).toBeGreaterThanOrEqual(1);
    expect(await credits(b)).toBe(9.9);
    // ...and when `a` comes back, its background flush of an idle user must not give the same credits back again.
    a.clock.advance(121_000);
    await a.app.context.ledger.flush();
    expect(await credits(b)).toBe(9.9);
    expect(await credits(a)).toBe(9.9);
    // `a` carries on under a new identity, so that its next reservation is swept again if it falls silent once more
    // (under the old one no sweeper would ever release it: the old identity's sweep is done and keyed to it).
    expect((await postJson(a, "/api/v1/imageA/generate", user.key, { prompt: "a second kite" })).status).toBe(200);
    await a.app.context.ledger.flushCharges(user.userId);
    const holds = await b.app.context.ledger.entries(user.userId, { kinds: ["hold"] });
    const renewed = holds.map((h) => h.reservationId?.replace(/^rsv:/, "")).find((id) => id !== instanceId);
    expect(renewed).toBeDefined();
    const instances = b.db.connection.collection<{ _id: string; seenAt: Date }>("ledger_instances");
    expect(await instances.countDocuments({ _id: renewed })).toBe(1);
    b.clock.advance(125_000);
    expect(await b.app.context.ledger.releaseExpiredHolds()).toBeGreaterThanOrEqual(1);
    expect(await credits(b)).toBe(9.8);
  });

  it("a key revoked on one instance is refused by the other within 1 s", async () => {
    const user = await fundedUser(a, 1);
    // warm both instances' key caches
    for (const s of [a, b]) expect((await fetch(`${s.url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } })).status).toBe(200);
    await a.app.context.apiKeys.revoke(user.userId, user.keyId);
    await new Promise((r) => setTimeout(r, 1_000));
    const res = await fetch(`${b.url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(res.status).toBe(401);
  });

  it("usage_count counts every use of a key on both instances, also when both write their batches at once", async () => {
    const user = await fundedUser(a, 1);
    const flushBoth = () => Promise.all([a, b].map((s) => (s.app.context.apiKeys as ApiKeyService).flushUsage()));
    for (let round = 0; round < 3; round += 1) {
      for (const s of [a, b, a, b, b]) expect((await fetch(`${s.url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } })).status).toBe(200);
      await flushBoth();
    }
    const [listed] = await a.app.context.apiKeys.listActive(user.userId);
    expect(listed?.usageCount).toBe(15);
  });
});
