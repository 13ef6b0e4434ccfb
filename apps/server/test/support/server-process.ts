import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@gw/db";

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/main.js");

export interface ServerProcess {
  url: string;
  outboxDir: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Runs the built server (`apps/server/dist/main.js`, made by `npm run build`) as its own process. `processGroup`: in a
 * process group of its own, as a terminal runs `npm start`, so that a signal to the group (Ctrl-C) reaches it alone.
 */
export async function startServerProcess(env: Record<string, string>, options: { processGroup?: boolean } = {}): Promise<ServerProcess> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gw-proc-"));
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [MAIN], {
    // only PATH is inherited: the child's settings are exactly the ones given here (ENV_FILE empty: a developer's
    // .env at the project root never reaches a test's server)
    // eslint-disable-next-line no-restricted-properties -- passing PATH to a child process, not reading a setting
    env: { PATH: process.env.PATH ?? "", ENV_FILE: "", NODE_ENV: "test", HOST: "127.0.0.1", PORT: String(port), PUBLIC_URL: url, DATA_DIR: dataDir, COOKIE_SECURE: "false", ...env },
    stdio: ["ignore", "ignore", "pipe"],
    detached: options.processGroup ?? false,
  });
  let stderr = "";
  child.stderr?.on("data", (b: Buffer) => { stderr += b.toString(); });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server process exited (${child.exitCode}): ${stderr}`);
    const up = await fetch(`${url}/api/status`).then((r) => r.ok, () => false);
    if (up) break;
    if (Date.now() > deadline) throw new Error(`server process did not answer on ${url}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    outboxDir: path.join(dataDir, "outbox"),
    process: child,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
    }),
  };
}

/** The pids of the FerretDB processes serving `dataDir` (Linux /proc). */
export function ferretdbPids(dataDir: string): number[] {
  const stateDir = `--state-dir=${path.join(dataDir, "ferretdb", "state")}`;
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").includes(stateDir)) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** After a test of crashes and signals: stops the servers still running, and any FerretDB left serving `dataDir`. */
export async function stopEverything(started: ServerProcess[], dataDir: string): Promise<void> {
  await Promise.all(started.filter((s) => s.process.exitCode === null && s.process.signalCode === null).map((s) => s.stop()));
  for (const pid of ferretdbPids(dataDir)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // exited meanwhile
    }
  }
}
