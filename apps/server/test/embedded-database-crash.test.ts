// A gateway that runs its embedded FerretDB (no MONGODB_URI) and is killed with SIGKILL (the OOM killer, `kill -9`)
// cannot stop that FerretDB. Started again on the same DATA_DIR, it must not leave the old one running beside the new.
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { call, uniqueEmail } from "./auth-helpers";
import { ferretdbPids, startServerProcess, stopEverything, type ServerProcess } from "./support/server-process";


/** `npm run reconcile` on `dataDir`: its exit code. `signal` is sent to it once its FerretDB runs. */
async function reconcile(dataDir: string, options: { ferretdbBin?: string; signal?: NodeJS.Signals } = {}): Promise<number | null> {
  const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/reconcile.js");
  const env: Record<string, string> = { NODE_ENV: "test", DATA_DIR: dataDir, ...(options.ferretdbBin ? { FERRETDB_BIN: options.ferretdbBin } : {}) };
  // eslint-disable-next-line no-restricted-properties -- passing PATH to a child process, not reading a setting
  const child = spawn(process.execPath, [script], { env: { PATH: process.env.PATH ?? "", ...env }, stdio: "ignore" });
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  if (options.signal) {
    const deadline = Date.now() + 20_000;
    while (ferretdbPids(dataDir).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.kill(options.signal);
  }
  return exit;
}

const exited = (server: ServerProcess) => new Promise<void>((resolve) => {
  if (server.process.exitCode !== null || server.process.signalCode !== null) return resolve();
  server.process.once("exit", () => resolve());
});

describe.runIf(process.platform === "linux")("embedded database after a crash", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gw-crash-"));
  const env = { DATA_DIR: dataDir, SESSION_SECRET: "embedded-crash-secret-embedded-crash-01" };
  const started: ServerProcess[] = [];

  afterAll(async () => {
    await stopEverything(started, dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * Starts a gateway, runs `meanwhile` beside it, kills it with SIGKILL, and starts a second one on the same DATA_DIR:
   * exactly one FerretDB runs then, not the killed gateway's, and a clean stop of the second leaves none.
   */
  async function crashAndRestart(meanwhile: () => Promise<void>): Promise<ServerProcess> {
    const first = await startServerProcess(env);
    started.push(first);
    const [orphan] = ferretdbPids(dataDir);
    expect(orphan).toBeDefined();
    await meanwhile();
    first.process.kill("SIGKILL");
    await exited(first);
    expect(ferretdbPids(dataDir)).toEqual([orphan]);

    const second = await startServerProcess(env);
    started.push(second);
    const running = ferretdbPids(dataDir);
    expect(running).toHaveLength(1);
    expect(running).not.toContain(orphan);
    return second;
  }

  async function stopLeavesNone(server: ServerProcess): Promise<void> {
    await server.stop();
    expect(ferretdbPids(dataDir)).toEqual([]);
  }

  it("a restart after SIGKILL stops the FerretDB the killed gateway left running, and serves", async () => {
    const second = await crashAndRestart(async () => undefined);
    expect((await fetch(`${second.url}/api/status`)).status).toBe(200);
    await stopLeavesNone(second);
  }, 90_000);

  it("the same after `npm run reconcile` ran beside the gateway (its own FerretDB did not make the gateway's forgotten)", async () => {
    const second = await crashAndRestart(async () => {
      expect(await reconcile(dataDir)).toBe(0);
    });
    await stopLeavesNone(second);
  }, 90_000);

  it("its FerretDB killed (the OOM killer) under a running gateway: started again, the gateway serves without a restart", async () => {
    const server = await startServerProcess(env);
    started.push(server);
    const [killed] = ferretdbPids(dataDir);
    if (killed === undefined) throw new Error("no FerretDB");
    process.kill(killed, "SIGKILL");
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await fetch(`${server.url}/api/status`)).status;
    }
    expect(status).toBe(200);
    expect((await call(server, "POST", "/api/auth/signup", { body: { email: uniqueEmail("oom"), password: "Quartz-Lamp-92", name: "After" } })).status).toBe(201);
    const running = ferretdbPids(dataDir);
    expect(running).toHaveLength(1);
    expect(running).not.toContain(killed);
    await stopLeavesNone(server);
  }, 90_000);

  it("Ctrl-C during `npm run reconcile` (its FerretDB starting) exits 130 and leaves no FerretDB running", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "gw-reconcile-int-"));
    // a FerretDB that takes a while to come up, so that the signal surely lands while reconcile waits for it
    const slowFerretdb = path.join(dir, "slow-ferretdb.sh");
    const real = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../.tools/bin/ferretdb");
    writeFileSync(slowFerretdb, `#!/bin/sh\nsleep 1\nexec ${real} "$@"\n`);
    chmodSync(slowFerretdb, 0o755);
    const data = path.join(dir, "data");
    try {
      expect(await reconcile(data, { ferretdbBin: slowFerretdb, signal: "SIGINT" })).toBe(130);
      await new Promise((r) => setTimeout(r, 500));
      expect(ferretdbPids(data)).toEqual([]);
    } finally {
      for (const pid of ferretdbPids(data)) process.kill(pid, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
