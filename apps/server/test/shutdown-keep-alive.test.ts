// SIGTERM while a client sends its requests one after another on a keep-alive connection (Node's http.Agent with
// keepAlive, as the SDKs use): the answer in flight says `Connection: close`, so the client's next request goes to a
// new connection that the stopped gateway refuses (ECONNREFUSED: surely not run, safe to send elsewhere), never onto
// the old one that the drain closes under it (ECONNRESET: a POST the client cannot tell was not run).
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Database } from "@gw/db";
import type { Ledger } from "@gw/billing";
import { newId } from "@gw/shared";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { call, RELAXED_LIMITS, verifiedUser } from "./auth-helpers";
import { freshDatabaseUri, openLedger } from "./support/direct-ledger";
import { startServerProcess, type ServerProcess } from "./support/server-process";

describe("SIGTERM with requests queued on a keep-alive connection", () => {
  let fakes: FakeUpstreams;
  let gateway: ServerProcess;
  let db: Database;
  let ledger: Ledger;

  beforeAll(async () => {
    fakes = await startFakeUpstreams();
    const mongoUri = freshDatabaseUri("keepalive");
    gateway = await startServerProcess({ ...fakes.env, ...RELAXED_LIMITS, MONGODB_URI: mongoUri, SESSION_SECRET: "shutdown-keep-alive-secret-0000000001" });
    ({ db, ledger } = await openLedger(mongoUri));
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await ledger?.close();
    await db?.close();
    await fakes?.close();
  });

  it("answers the request in flight with Connection: close; the next one is refused, not reset", async () => {
    const user = await verifiedUser(gateway);
    const key = (await call(gateway, "POST", "/api/keys", { cookie: user.cookie, body: { name: "keep-alive" } })).body.key as string;
    await ledger.credit(user.id, 1_000_000, { kind: "adjustment", idempotencyKey: newId("keepalive") });
    // one connection, reused for each request as soon as the previous answer ends
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const { hostname, port } = new URL(gateway.url);
    const chat = (content: string) => new Promise<{ status?: number; connection?: string; error?: string }>((resolve) => {
      const body = JSON.stringify({ model: "textA-4", messages: [{ role: "user", content }], max_tokens: 20 });
      http.request({
        agent, host: hostname, port, path: "/v1/chat/completions", method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      }, (res) => {
        res.resume().on("end", () => resolve({ status: res.statusCode, connection: res.headers.connection }));
      }).on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code })).end(body);
    });
    try {
      expect(await chat("warm")).toEqual({ status: 200, connection: "keep-alive" });
      fakes.textA.latencyMs = 1_500;
      const chatsUpstream = () => fakes.textA.requests.filter((r) => r.path === "/v1/chat/completions").length;
      const before = chatsUpstream();
      const answers = [chat("first"), chat("second"), chat("third")];
      // "first" is in flight once the upstream has it (a fixed pause could signal before it even reached the gateway)
      await vi.waitFor(() => expect(chatsUpstream()).toBe(before + 1), { timeout: 10_000, interval: 20 });
      const exited = new Promise<number | null>((resolve) => gateway.process.once("exit", (code) => resolve(code)));
      gateway.process.kill("SIGTERM");
      expect(await Promise.all(answers)).toEqual([{ status: 200, connection: "close" }, { error: "ECONNREFUSED" }, { error: "ECONNREFUSED" }]);
      expect(await exited).toBe(0);
    } finally {
      fakes.textA.latencyMs = 0;
      agent.destroy();
    }
    const settles = (await ledger.entries(user.id, { limit: 100 })).filter((e) => e.kind === "settle");
    expect(settles).toHaveLength(2);
    expect(await ledger.balance(user.id)).toBe(1_000_000 - settles.reduce((sum, e) => sum + (e.cost ?? 0), 0));
    expect((await ledger.verify(user.id)).problems).toEqual([]);
  }, 60_000);
});
