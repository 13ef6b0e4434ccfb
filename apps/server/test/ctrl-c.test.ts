// Ctrl-C on `npm start` sends SIGINT to the terminal's whole foreground process group: the gateway and the embedded
// FerretDB it started. The README promises that requests in flight are answered and charged as usual, and pending
// charges written, before the gateway exits: the database has to outlive the gateway's shutdown for that.
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it, inject, vi } from "vitest";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { call, verifiedUser } from "./auth-helpers";
import { ferretdbPids, startServerProcess, stopEverything, type ServerProcess } from "./support/server-process";

const WEBHOOK_SECRET = "whsec_ctrl_c_secret";


const exited = (server: ServerProcess) => new Promise<void>((resolve) => {
  if (server.process.exitCode !== null || server.process.signalCode !== null) return resolve();
  server.process.once("exit", () => resolve());
});

describe.runIf(process.platform === "linux")("Ctrl-C on a gateway with its embedded database", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gw-ctrl-c-"));
  const started: ServerProcess[] = [];
  let upstreams: FakeUpstreams;
  let env: Record<string, string>;

  beforeAll(async () => {
    upstreams = await startFakeUpstreams();
    env = {
      ...upstreams.env,
      DATA_DIR: dataDir,
      SESSION_SECRET: "ctrl-c-secret-ctrl-c-secret-ctrl-c-01",
      STRIPE_SECRET_KEY: "sk_test_123",
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: inject("stripeMockUrl"),
    };
  });

  afterAll(async () => {
    await stopEverything(started, dataDir);
    await upstreams.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers the request in flight and charges it: after a restart it is in the usage and off the balance", async () => {
    const first = await startServerProcess(env, { processGroup: true });
    started.push(first);
    const address = { url: first.url, outboxDir: path.join(dataDir, "outbox") };
    const user = await verifiedUser(address);
    const key = (await call(address, "POST", "/api/keys", { cookie: user.cookie, body: { name: "ctrl-c" } })).body.key as string;
    const intent = await call(address, "POST", "/api/billing/create-payment-intent", { cookie: user.cookie, body: { amount: 10 } });
    expect(intent.status).toBe(200);
    const event = JSON.stringify({
      id: `evt_ctrl_c_${Date.now()}`, object: "event", type: "payment_intent.succeeded", created: Math.floor(Date.now() / 1000), livemode: false,
      data: { object: { id: intent.body.payment_intent_id, object: "payment_intent", amount: 1000, currency: "usd", status: "succeeded", metadata: {} } },
    });
    const hook = await fetch(`${first.url}/api/billing/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload: event, secret: WEBHOOK_SECRET }) },
      body: event,
    });
    expect(hook.status).toBe(200);

    upstreams.textA.failNext(1, { kind: "delay", ms: 5_000 }, { path: "/v1/chat/completions" });
    const chatsUpstream = () => upstreams.textA.requests.filter((r) => r.path === "/v1/chat/completions").length;
    const before = chatsUpstream();
    const inFlight = fetch(`${first.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "Hello" }] }),
    });
    // in flight once the upstream has it: a fixed pause could signal before the request even reached the gateway
    await vi.waitFor(() => expect(chatsUpstream()).toBe(before + 1), { timeout: 10_000, interval: 20 });
    const pid = first.process.pid;
    if (pid === undefined) throw new Error("no pid");
    process.kill(-pid, "SIGINT"); // what Ctrl-C does: the signal goes to the whole process group
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    const cost = Number(answer.headers.get("x-request-cost"));
    expect(cost).toBeGreaterThan(0);
    await exited(first);
    expect(first.process.exitCode).toBe(0);
    expect(ferretdbPids(dataDir)).toEqual([]); // the gateway took its FerretDB down with it

    const second = await startServerProcess(env);
    started.push(second);
    const usage = await fetch(`${second.url}/api/usage`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await usage.json()) as { pagination: { total: number }; totals: { cost: number } };
    expect(body.pagination.total).toBe(1);
    expect(body.totals.cost).toBeCloseTo(cost, 6);
    const credits = await fetch(`${second.url}/api/billing/credits`, { headers: { authorization: `Bearer ${key}` } });
    expect(await credits.json()).toEqual({ balance: Number((10 - cost).toFixed(6)), currency: "USD" });
    await second.stop();
    expect(ferretdbPids(dataDir)).toEqual([]);
  }, 120_000);

  it("a closed terminal (SIGHUP to the group) stops the gateway cleanly and its FerretDB with it", async () => {
    const server = await startServerProcess(env, { processGroup: true });
    started.push(server);
    expect(ferretdbPids(dataDir)).toHaveLength(1);
    const pid = server.process.pid;
    if (pid === undefined) throw new Error("no pid");
    process.kill(-pid, "SIGHUP");
    await exited(server);
    expect(server.process.exitCode).toBe(0);
    expect(ferretdbPids(dataDir)).toEqual([]);
  }, 60_000);

  it("Ctrl-C while the gateway starts (its FerretDB not yet answering) exits 130 and leaves no FerretDB running", async () => {
    const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
    const startDir = mkdtempSync(path.join(os.tmpdir(), "gw-ctrl-c-start-"));
    // a FerretDB that takes a while to come up, so that the signal surely lands while the start waits for it
    const slowFerretdb = path.join(startDir, "slow-ferretdb.sh");
    writeFileSync(slowFerretdb, `#!/bin/sh\nsleep 1\nexec ${path.join(repo, ".tools/bin/ferretdb")} "$@"\n`);
    chmodSync(slowFerretdb, 0o755);
    const dir = path.join(startDir, "data");
    const child = spawn(process.execPath, [path.join(repo, "apps/server/dist/main.js")], {
      // eslint-disable-next-line no-restricted-properties -- passing PATH to a child process, not reading a setting
      env: { PATH: process.env.PATH ?? "", NODE_ENV: "test", HOST: "127.0.0.1", PORT: "0", PUBLIC_URL: "http://127.0.0.1:1", DATA_DIR: dir, FERRETDB_BIN: slowFerretdb },
      stdio: "ignore",
    });
    const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const deadline = Date.now() + 20_000;
      // (the wrapper's `sleep` is, between its fork and its exec, a second process with the wrapper's arguments)
      while (ferretdbPids(dir).length !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(ferretdbPids(dir)).toHaveLength(1);
      child.kill("SIGINT");
      expect(await exit).toBe(130);
      // the exit hook sent SIGTERM: the FerretDB (or its wrapper) ends soon after, not necessarily within a fixed pause
      await vi.waitFor(() => expect(ferretdbPids(dir)).toEqual([]), { timeout: 10_000, interval: 50 });
    } finally {
      child.kill("SIGKILL");
      for (const pid of ferretdbPids(dir)) process.kill(pid, "SIGKILL");
      rmSync(startDir, { recursive: true, force: true });
    }
  }, 60_000);
});
