import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { readCookie, SESSION_COOKIE } from "@gw/auth";
import { freePort } from "@gw/db";
import { randomBase62 } from "@gw/shared";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { fundedUser } from "./support/gateway-fixtures";
import { startRedis as startPausableRedis } from "./support/redis";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk arbitrary JSON
type JsonResponse = Omit<Response, "json"> & { json(): Promise<any> };
const http = (input: string, init?: RequestInit): Promise<JsonResponse> => fetch(input, init);

// Several gateway instances behind one load balancer (CONTRACT 3 and 7): a shared Redis carries rate-limit counters
// and key revocations. Needs `redis-server` on PATH (.ci/run installs Debian's).

async function startRedis(port?: number): Promise<{ url: string; stop(): Promise<void> }> {
  port ??= await freePort();
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => { socket.destroy(); resolve(true); });
      socket.once("error", () => resolve(false));
    });
    if (open) break;
    if (Date.now() > deadline) throw new Error("redis-server did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    }),
  };
}

function standInSessions(server: TestServer): void {
  server.app.context.sessions = {
    fromRequest: async (req) => {
      const userId = readCookie(req.get("cookie"), SESSION_COOKIE);
      return userId ? { userId, sessionId: `ses_${userId}`, emailVerified: true } : null;
    },
    isActive: async () => true,
  };
}

/** Resolves once the instance has evicted a key it heard of on the revocation bus (it revokes none itself here). */
function evictionHeardBy(server: TestServer, withinMs = 5_000): Promise<string> {
  const service = server.app.context.apiKeys as unknown as { forget(hash: string): void };
  const forget = service.forget.bind(service);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      service.forget = forget;
      reject(new Error(`no revocation heard on the bus within ${withinMs} ms`));
    }, withinMs);
    service.forget = (hash) => {
      forget(hash);
      service.forget = forget;
      clearTimeout(timer);
      resolve(hash);
    };
  });
}

describe("two instances sharing Redis", () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    redis = await startRedis();
    const databaseName = `t_${randomBase62(12)}`;
    const env = { REDIS_URL: redis.url, LIMIT_STATUS: "3/60" };
    a = await startTestServer({ env, databaseName });
    b = await startTestServer({ env, databaseName });
    standInSessions(a);
    standInSessions(b);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await redis.stop();
  });

  it("enforce one rate limit together", async () => {
    const statuses: number[] = [];
    for (const server of [a, b, a, b]) statuses.push((await http(`${server.url}/api/status`)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it("a key revoked on one instance is refused by the other at once (pub/sub, not just cache expiry)", async () => {
    const headers = { cookie: `${SESSION_COOKIE}=usr_multi`, "content-type": "application/json" };
    const created = await (await http(`${a.url}/api/keys`, { method: "POST", headers, body: JSON.stringify({ name: "shared" }) })).json();
    expect(await b.app.context.apiKeys.verify(created.key)).not.toBeNull();
    const evicted = evictionHeardBy(b);
    const revoked = await http(`${a.url}/api/keys/${created.id}`, { method: "DELETE", headers: { cookie: headers.cookie } });
    expect(revoked.status).toBe(200);
    await evicted;
    expect(await b.app.context.apiKeys.verify(created.key)).toBeNull();
  });
});

describe("Redis unreachable", () => {
  let server: TestServer;
  beforeAll(async () => {
    const deadPort = await freePort();
    server = await startTestServer({ env: { REDIS_URL: `redis://127.0.0.1:${deadPort}`, LIMIT_STATUS: "2/60" } });
  });
  afterAll(async () => {
    await server.close();
  });

  it("keeps serving and enforces limits per instance in memory (documented fallback)", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await http(`${server.url}/api/status`)).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});

describe("two instances started while Redis is down, Redis up later", () => {
  let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    const port = await freePort();
    const databaseName = `t_${randomBase62(12)}`;
    const env = { REDIS_URL: `redis://127.0.0.1:${port}` };
    a = await startTestServer({ env, databaseName });
    b = await startTestServer({ env, databaseName });
    standInSessions(a);
    standInSessions(b);
    // long enough for the connections' first reconnects to fail too
    await new Promise((r) => setTimeout(r, 1_500));
    redis = await startRedis(port);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await redis?.stop();
  });

  it("both subscribe to key revocations once Redis answers: one revoked on one instance is refused by the other at once", async () => {
    const probe = new Redis(redis?.url ?? "");
    try {
      const deadline = Date.now() + 10_000;
      const subscribers = async () => Number(((await probe.pubsub("NUMSUB", "gw:api-keys:revoked")) as [string, number])[1]);
      while ((await subscribers()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await subscribers()).toBe(2);
    } finally {
      probe.disconnect();
    }
    // A's publishing connection reconnects on its own backoff, which may end after the subscriptions: a revocation
    // published before that is lost (b then evicts on cache expiry). Keys are revoked until one is heard, for 15 s.
    const headers = { cookie: `${SESSION_COOKIE}=usr_late`, "content-type": "application/json" };
    const deadline = Date.now() + 15_000;
    for (let attempt = 1; ; attempt++) {
      const created = await (await http(`${a.url}/api/keys`, { method: "POST", headers, body: JSON.stringify({ name: `late-${attempt}` }) })).json();
      expect(await b.app.context.apiKeys.verify(created.key)).not.toBeNull();
      const evicted = evictionHeardBy(b, 2_000).then(() => true, () => false);
      expect((await http(`${a.url}/api/keys/${created.id}`, { method: "DELETE", headers: { cookie: headers.cookie } })).status).toBe(200);
      if (await evicted) {
        expect(await b.app.context.apiKeys.verify(created.key)).toBeNull();
        return;
      }
      expect(Date.now()).toBeLessThan(deadline);
    }
  }, 30_000);
});

describe("two instances without Redis", () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    const databaseName = `t_${randomBase62(12)}`;
    a = await startTestServer({ databaseName });
    b = await startTestServer({ databaseName });
    standInSessions(a);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it("a revoked key is refused by the other instance within 1 second (cache TTL)", async () => {
    const headers = { cookie: `${SESSION_COOKIE}=usr_pair`, "content-type": "application/json" };
    const created = await (await http(`${a.url}/api/keys`, { method: "POST", headers, body: JSON.stringify({ name: "pair" }) })).json();
    expect(await b.app.context.apiKeys.verify(created.key)).not.toBeNull();
    expect((await http(`${a.url}/api/keys/${created.id}`, { method: "DELETE", headers: { cookie: headers.cookie } })).status).toBe(200);
    const started = performance.now();
    while ((await b.app.context.apiKeys.verify(created.key)) !== null) {
      expect(performance.now() - started).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 20));
    }
  });
});

describe("Redis that stops answering (paused, or cut off without the connection closing)", () => {
  let redis: { url: string; process: ChildProcess };
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    redis = await startPausableRedis();
    const databaseName = `t_${randomBase62(12)}`;
    a = await startTestServer({ env: { REDIS_URL: redis.url }, databaseName });
    b = await startTestServer({ env: { REDIS_URL: redis.url }, databaseName });
  });
  afterAll(async () => {
    redis.process.kill("SIGCONT");
    await a.close();
    await b.close();
    redis.process.kill("SIGKILL");
  });

  it("requests are answered from the in-memory fallback, not held; once Redis answers again no slot is left taken", async () => {
    const user = await fundedUser(a, 1);
    const models = (server: TestServer) => fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` }, signal: AbortSignal.timeout(3_000) });
    expect((await models(a)).status).toBe(200);
    redis.process.kill("SIGSTOP");
    try {
      for (const server of [a, b, a, b]) {
        const started = performance.now();
        expect((await models(server)).status).toBe(200);
        expect((await http(`${server.url}/api/status`, { signal: AbortSignal.timeout(3_000) })).status).toBe(200);
        expect(performance.now() - started).toBeLessThan(2_000);
      }
    } finally {
      redis.process.kill("SIGCONT");
    }
    // Reconnected without a restart. The slot acquisitions that timed out ran when Redis resumed; they are given back,
    // else this free-plan user (2 concurrent requests) would be refused until the slots expire.
    const observer = new Redis(redis.url);
    try {
      const deadline = Date.now() + 10_000;
      while ((a.app.context.redis?.status !== "ready" || b.app.context.redis?.status !== "ready") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      while ((await observer.zcard(`gw:slots:${user.userId}`)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await observer.zcard(`gw:slots:${user.userId}`)).toBe(0);
      const counted = Number(await observer.get(`gw:rpm:${user.userId}`));
      const statuses = await Promise.all([models(a), models(b)]).then((all) => all.map((r) => r.status));
      expect(statuses).toEqual([200, 200]);
      // the minute counter is shared again
      expect(Number(await observer.get(`gw:rpm:${user.userId}`))).toBe(counted + 2);
    } finally {
      observer.disconnect();
    }
  });
});
