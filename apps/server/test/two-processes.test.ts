// Issue 3's multi-instance proof with real processes: two built servers (`dist/main.js`) behind no shared memory,
// sharing one database and one Redis. One balance, one requests-per-minute limit, revocations seen within 1 s.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_PLANS } from "@gw/config";
import type { Database } from "@gw/db";
import type { Ledger } from "@gw/billing";
import { dollarsToMicros, newId } from "@gw/shared";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { call, verifiedUser } from "./auth-helpers";
import { startRedis } from "./support/redis";
import { freshDatabaseUri, openLedger } from "./support/direct-ledger";
import { startServerProcess, type ServerProcess } from "./support/server-process";

const IMAGE_COST = 100_000; // a standard image: $0.10 (SPEC 8)

describe("two gateway processes sharing one database and one Redis", () => {
  let fakes: FakeUpstreams;
  let redis: { url: string; process: ChildProcess };
  let a: ServerProcess;
  let b: ServerProcess;
  let db: Database;
  let ledger: Ledger;
  let env: Record<string, string>;

  beforeAll(async () => {
    [fakes, redis] = await Promise.all([startFakeUpstreams(), startRedis()]);
    const mongoUri = freshDatabaseUri("procs");
    const configFile = path.join(mkdtempSync(path.join(os.tmpdir(), "gw-procs-")), "config.json");
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 30, concurrentRequests: 100 } : p));
    writeFileSync(configFile, JSON.stringify({ plans }));
    env = {
      ...fakes.env,
      MONGODB_URI: mongoUri,
      REDIS_URL: redis.url,
      CONFIG_FILE: configFile,
      SESSION_SECRET: "two-processes-secret-two-processes-01",
      LIMIT_REGISTER: "1000/3600",
      LIMIT_LOGIN_IP: "1000/3600",
    };
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    // the test's own view of the shared ledger, as a third instance would see it
    ({ db, ledger } = await openLedger(mongoUri));
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await ledger?.close();
    await db?.close();
    await fakes?.close();
    redis?.process.kill("SIGTERM");
  });

  /** A verified user (signed up on A, logged in on B: one session store) with a key made on A. */
  async function userWithKey(): Promise<{ id: string; cookie: string; key: string; keyId: string }> {
    const user = await verifiedUser(a);
    const created = await call(b, "POST", "/api/keys", { cookie: user.cookie, body: { name: "procs" } });
    expect(created.status).toBe(201);
    return { id: user.id, cookie: user.cookie, key: created.body.key as string, keyId: created.body.id as string };
  }

  const image = (server: ServerProcess, key: string) =>
    fetch(`${server.url}/api/v1/imageA/generate`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ prompt: "a red kite over the sea" }),
    });

  it("one balance: a balance for K images, 4K concurrent requests over both processes -> at most K succeed, never negative", async () => {
    const K = 5;
    const user = await userWithKey();
    await ledger.credit(user.id, K * IMAGE_COST, { kind: "adjustment", idempotencyKey: newId("procs") });
    const responses = await Promise.all(Array.from({ length: 4 * K }, (_, i) => image(i % 2 ? a : b, user.key)));
    const statuses = responses.map((r) => r.status);
    const ok = statuses.filter((s) => s === 200).length;
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    expect(ok).toBeGreaterThan(0);
    expect(ok).toBeLessThanOrEqual(K);
    for (const res of responses.filter((r) => r.status === 200)) expect(Number(res.headers.get("x-request-cost"))).toBe(0.1);

    // Each process writes its charges and gives unused reserved credits back once the user is idle (about a second).
    // The balance can reach its final value before the (amount 0) settle entries land, so wait for both.
    const expected = (K - ok) * IMAGE_COST;
    const settled = async () => (await ledger.entries(user.id, { limit: 500, kinds: ["settle"] })).length;
    const deadline = Date.now() + 10_000;
    while (((await ledger.balance(user.id)) !== expected || (await settled()) < ok) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await ledger.balance(user.id)).toBe(expected);
    const entries = await ledger.entries(user.id, { limit: 500 });
    expect(entries.reduce((s, e) => s + e.amount, 0)).toBe(expected);
    expect(entries.filter((e) => e.kind === "settle").map((e) => e.cost)).toEqual(Array(ok).fill(IMAGE_COST));
    expect((await ledger.verify(user.id)).problems).toEqual([]);
    // both processes report the same balance, in dollars
    for (const server of [a, b]) {
      const credits = await call(server, "GET", "/api/billing/credits", { headers: { authorization: `Bearer ${user.key}` } });
      expect(credits.body).toEqual({ balance: expected / 1_000_000, currency: "USD" });
    }
  });

  it("one requests-per-minute limit across both processes", async () => {
    const user = await userWithKey();
    await ledger.credit(user.id, dollarsToMicros(1), { kind: "adjustment", idempotencyKey: newId("procs") });
    const statuses: number[] = [];
    for (let i = 0; i < 34; i++) {
      const res = await fetch(`${(i % 2 ? a : b).url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } });
      statuses.push(res.status);
      if (i === 33) expect(res.headers.get("x-ratelimit-limit")).toBe("30");
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.slice(30)).toEqual([429, 429, 429, 429]);
  });

  it("a key revoked through one process is refused by the other within 1 s", async () => {
    const user = await userWithKey();
    for (const server of [a, b]) {
      const res = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } });
      expect(res.status).toBe(200);
    }
    const revoked = await call(a, "DELETE", `/api/keys/${user.keyId}`, { cookie: user.cookie });
    expect(revoked.status).toBe(200);
    const start = Date.now();
    let status = 0;
    while (Date.now() - start < 1_000) {
      status = (await fetch(`${b.url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } })).status;
      if (status === 401) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(401);
  });

  it("SIGTERM: requests in flight are answered and charged once, also between two upstream calls; the rest goes back", async () => {
    const user = await userWithKey();
    await ledger.credit(user.id, dollarsToMicros(1), { kind: "adjustment", idempotencyKey: newId("procs") });
    const c = await startServerProcess(env);
    // Flux tasks are polled: most of such a request is spent between two upstream calls, with nothing in flight upstream.
    fakes.imageB.pollsBeforeReady = 4;
    try {
      const post = (route: string, body: unknown) => fetch(`${c.url}${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const earlier = new Set(fakes.imageB.tasks.keys());
      const inFlight = [post("/api/v1/imageB.1", { prompt: "a red kite" }), post("/api/v1/task", { model: "imageB-1-dev", prompt: "a blue kite" })];
      // both tasks submitted and polled once (a fixed wait let a loaded machine signal before the requests arrived)
      const polled = () => [...fakes.imageB.tasks].filter(([id, task]) => !earlier.has(id) && task.polls >= 1).length;
      const deadline = Date.now() + 15_000;
      while (polled() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const exited = new Promise((resolve) => c.process.once("exit", resolve));
      c.process.kill("SIGTERM");
      const answers = await Promise.all(inFlight);
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      expect(answers.map((r) => r.headers.get("x-request-cost"))).toEqual(["0.100000", "0.100000"]);
      expect(await exited).toBe(0);
    } finally {
      fakes.imageB.pollsBeforeReady = 1;
      await c.stop();
    }
    // The stopped process wrote both charges and gave the rest of its reservation back before it exited.
    const entries = await ledger.entries(user.id, { limit: 500 });
    expect(entries.filter((e) => e.kind === "settle").map((e) => e.cost)).toEqual([IMAGE_COST, IMAGE_COST]);
    expect(await ledger.balance(user.id)).toBe(dollarsToMicros(1) - 2 * IMAGE_COST);
    expect((await ledger.verify(user.id)).problems).toEqual([]);
  });
});
