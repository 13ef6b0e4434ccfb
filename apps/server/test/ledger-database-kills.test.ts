// The way the hole in a ledger chain was found: the embedded FerretDB killed (SIGKILL) several times under a gateway
// serving concurrent paid requests. The gateway serves from its reservations while the database is away and writes
// the charges in one batch when it is back; afterwards `npm run reconcile` must find every chain whole (nothing to
// repair) and each balance must be the credit less exactly the charges of the requests that were answered.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_PLANS } from "@gw/config";
import type { Database } from "@gw/db";
import type { Ledger } from "@gw/billing";
import { newId } from "@gw/shared";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { call, verifiedUser } from "./auth-helpers";
import { openLedger } from "./support/direct-ledger";
import { ferretdbPids, startServerProcess, stopEverything, type ServerProcess } from "./support/server-process";

const KILLS = 4;
const USERS = 2;
const CONCURRENCY = 12;
const CREDIT = 50_000_000;

/** `npm run reconcile` on `dataDir`: its exit code and its JSON report. */
function reconcile(dataDir: string): Promise<{ code: number | null; report: { ok: boolean; repaired_gaps: unknown[]; problems: string[] } }> {
  const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/reconcile.js");
  // eslint-disable-next-line no-restricted-properties -- passing PATH to a child process, not reading a setting
  const child = spawn(process.execPath, [script], { env: { PATH: process.env.PATH ?? "", NODE_ENV: "test", DATA_DIR: dataDir }, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (b: Buffer) => { out += b.toString(); });
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, report: JSON.parse(out || "{}") })));
}

/** The port the running embedded FerretDB of `dataDir` listens on. */
function ferretdbPort(dataDir: string): number {
  const [pid] = ferretdbPids(dataDir);
  if (pid === undefined) throw new Error("no FerretDB");
  const listen = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").find((a) => a.startsWith("--listen-addr="));
  return Number(listen?.split(":").at(-1));
}

describe.runIf(process.platform === "linux")("the embedded database killed again and again under paid load", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gw-ledger-kills-"));
  const started: ServerProcess[] = [];
  let fakes: FakeUpstreams | undefined;
  let direct: { db: Database; ledger: Ledger } | undefined;

  afterAll(async () => {
    await direct?.ledger.close();
    await direct?.db.close();
    await stopEverything(started, dataDir);
    await fakes?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("every chain stays whole and every balance is the credit less the answered requests' charges", async () => {
    fakes = await startFakeUpstreams();
    const configFile = path.join(dataDir, "config.json");
    writeFileSync(configFile, JSON.stringify({ plans: DEFAULT_PLANS.map((p) => ({ ...p, requestsPerMinute: 100_000, concurrentRequests: 100 })) }));
    const env = { ...fakes.env, DATA_DIR: dataDir, CONFIG_FILE: configFile, SESSION_SECRET: "ledger-kills-secret-ledger-kills-secret" };
    const process_ = await startServerProcess(env);
    started.push(process_);
    // its mails go to the outbox of the DATA_DIR given
    const server = { ...process_, outboxDir: path.join(dataDir, "outbox") };
    direct = await openLedger(`mongodb://127.0.0.1:${ferretdbPort(dataDir)}/gateway`);
    const { ledger } = direct;

    const users = await Promise.all(Array.from({ length: USERS }, async (_, i) => {
      const user = await verifiedUser(server);
      const created = await call(server, "POST", "/api/keys", { cookie: user.cookie, body: { name: `load-${i}` } });
      await ledger.credit(user.id, CREDIT, { kind: "adjustment", idempotencyKey: newId("kills") });
      return { id: user.id, key: created.body.key as string, answered: 0 };
    }));

    let running = true;
    let answered = 0;
    const load = users.flatMap((user) => Array.from({ length: CONCURRENCY }, async () => {
      while (running) {
        const res = await fetch(`${server.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "hello there" }], max_tokens: 20 }),
        }).catch(() => undefined);
        if (res?.status === 200) {
          user.answered += 1;
          answered += 1;
        }
        await res?.arrayBuffer().catch(() => undefined);
        if (res?.status !== 200) await new Promise((r) => setTimeout(r, 20));
      }
    }));

    for (let kill = 0; kill < KILLS; kill++) {
      const before = answered;
      await vi.waitFor(() => { expect(answered).toBeGreaterThan(before + 150); }, { timeout: 30_000, interval: 50 });
      const [pid] = ferretdbPids(dataDir);
      if (pid === undefined) throw new Error("no FerretDB");
      process.kill(pid, "SIGKILL");
      // the gateway starts it again on the same port
      await vi.waitFor(() => { expect(ferretdbPids(dataDir).filter((p) => p !== pid)).toHaveLength(1); }, { timeout: 30_000, interval: 100 });
    }
    const last = answered;
    await vi.waitFor(() => { expect(answered).toBeGreaterThan(last + 50); }, { timeout: 30_000, interval: 50 });
    running = false;
    await Promise.all(load);
    // a clean stop writes every charge and gives the reservations back
    await server.stop();
    await direct.ledger.close();
    await direct.db.close();
    direct = undefined;

    const { code, report } = await reconcile(dataDir);
    expect(report).toMatchObject({ ok: true, repaired_gaps: [], problems: [] });
    expect(code).toBe(0);

    // the database again (reconcile stopped its own), to read the sums
    const after = await startServerProcess(env);
    started.push(after);
    direct = await openLedger(`mongodb://127.0.0.1:${ferretdbPort(dataDir)}/gateway`);
    const entries = direct.db.connection.collection<{ userId: string; kind: string; cost?: number; amount: number }>("ledger_entries");
    for (const user of users) {
      const settles = await entries.find({ userId: user.id, kind: "settle" }).toArray();
      expect(settles).toHaveLength(user.answered);
      const charged = settles.reduce((sum, e) => sum + (e.cost ?? 0), 0);
      expect(charged).toBeGreaterThan(0);
      expect(await direct.ledger.balance(user.id)).toBe(CREDIT - charged);
      const all = await entries.find({ userId: user.id }).toArray();
      expect(all.reduce((sum, e) => sum + e.amount, 0)).toBe(CREDIT - charged);
    }
    await after.stop();
  }, 150_000);
});
