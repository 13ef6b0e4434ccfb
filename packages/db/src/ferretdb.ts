import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { embeddedDatabaseEnv } from "@gw/config";

export interface EmbeddedMongo {
  uri: string;
  /** the FerretDB process */
  pid: number | undefined;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number, spawnError: () => Error | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const failed = spawnError();
    if (failed) throw failed;
    if (child.exitCode !== null) throw new Error(`ferretdb exited early with code ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => { socket.destroy(); resolve(true); });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`ferretdb did not listen on ${port} within ${timeoutMs} ms`);
}

/** Locates the FerretDB binary built by scripts/install-tools.mjs. */
export function findFerretdbBinary(explicit?: string, searchFrom = process.cwd()): string {
  if (explicit) return explicit;
  let dir = path.resolve(searchFrom);
  for (;;) {
    const candidate = path.join(dir, ".tools", "bin", "ferretdb");
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error("FerretDB binary not found: run `node scripts/install-tools.mjs ferretdb` (needs Go) or set MONGODB_URI");
}

/**
 * The CPU priority (`nice` value) the gateway gives the FerretDB it embeds. On a machine it shares with the gateway,
 * the database only ever runs the ledger's batched background writes and the occasional lookup, and a request waits
 * for none of them; at the default priority a batch of ~300 inserts (tens of ms of CPU) took the core from the
 * gateway's event loop and its requests queued behind it. Lower, it runs on what the request path leaves.
 */
export const BACKGROUND_NICENESS = 10;

/**
 * Gives every thread of a process the `nice` value (Linux sets priorities per thread, and only threads started
 * later inherit it). Best effort: where /proc is missing only the main thread is changed, and a refusal is ignored.
 */
function lowerPriority(pid: number, niceness: number): void {
  let threads: number[];
  try {
    threads = readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    threads = [pid];
  }
  for (const tid of threads) {
    try {
      os.setPriority(tid, niceness);
    } catch {
      // gone meanwhile, or not permitted: the database still works, only at the default priority
    }
  }
}

/**
 * Threads that a thread not yet lowered starts while `lowerPriority` walks the list keep the default priority (a busy
 * machine makes the Go runtime start threads late): the walk is repeated after those have started, once every thread
 * left to start one is lowered. Best effort, as `lowerPriority`.
 */
const PRIORITY_PASSES_MS = [0, 500, 2_000];

function lowerPriorityOfAllThreads(pid: number, niceness: number): void {
  for (const delay of PRIORITY_PASSES_MS) {
    if (delay === 0) lowerPriority(pid, niceness);
    else setTimeout(() => lowerPriority(pid, niceness), delay).unref();
  }
}

/**
 * Names the FerretDBs running on a state directory and the process that started each: a gateway, and meanwhile
 * `npm run reconcile` (its own FerretDB on the same files), so that a start never forgets the gateway's.
 */
const OWNER_FILE = "gateway-owner.json";

interface Owner { pid: number; ownerPid: number }

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The records of OWNER_FILE; one object (the file's form before it listed several) reads as a list of one. */
function readOwners(stateDir: string): Owner[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path.join(stateDir, OWNER_FILE), "utf8"));
  } catch {
    return [];
  }
  return (Array.isArray(raw) ? raw as unknown[] : [raw]).filter((o): o is Owner => {
    const { pid, ownerPid } = (o ?? {}) as { pid?: unknown; ownerPid?: unknown };
    return typeof pid === "number" && typeof ownerPid === "number";
  });
}

/** Stops `pid` when it still runs FerretDB on this state directory (Linux /proc; elsewhere nothing is stopped). */
async function stopOrphan(stateDir: string, pid: number): Promise<void> {
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return;
  }
  if (!args.includes(`--state-dir=${stateDir}`)) return;
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + 5_000;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (isAlive(pid)) process.kill(pid, "SIGKILL");
}

/**
 * A gateway killed with SIGKILL (the OOM killer, `kill -9`) cannot stop its FerretDB, which then keeps running on the
 * same files. The next start on that directory stops every FerretDB whose starter is gone; the records of starters
 * still running (a gateway while `npm run reconcile` starts) are kept and returned.
 */
async function stopOrphans(stateDir: string): Promise<Owner[]> {
  const running: Owner[] = [];
  for (const owner of readOwners(stateDir)) {
    if (isAlive(owner.ownerPid)) running.push(owner);
    else await stopOrphan(stateDir, owner.pid);
  }
  return running;
}

/**
 * Starts FerretDB with its SQLite backend under `dir` on a free loopback port. Debug HTTP is disabled so
 * several instances never collide on its default port. `niceness` (e.g. BACKGROUND_NICENESS) lowers its CPU
 * priority once it listens, when all of its threads exist. `onExit` set: a FerretDB that exits on its own once it served
 * (a crash, the OOM killer) is told there and started again on the same port after a second, so the gateway's driver
 * reconnects and serves again without a restart; a stopped one is not.
 */
export async function startFerretdb(options: { dir: string; binary?: string; port?: number; niceness?: number; log?: (line: string) => void; onExit?: (code: number | null, signal: NodeJS.Signals | null) => void }): Promise<EmbeddedMongo> {
  const binary = findFerretdbBinary(options.binary);
  const dataDir = path.join(options.dir, "sqlite");
  const stateDir = path.join(options.dir, "state");
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(stateDir, { recursive: true });
  const owners = await stopOrphans(stateDir);
  const port = options.port ?? (await freePort());
  const env = embeddedDatabaseEnv();
  // A process group of its own: Ctrl-C signals the terminal's whole foreground group, and FerretDB must outlive the
  // gateway's shutdown (requests in flight answered and charged, pending charges written); stop() ends it after.
  let child: ChildProcess;
  let stopping = false;
  const start = async (): Promise<void> => {
    const started = spawn(binary, [
      "--handler=sqlite",
      `--sqlite-url=file:${dataDir}/`,
      `--listen-addr=127.0.0.1:${port}`,
      `--state-dir=${stateDir}`,
      "--debug-addr=-",
      "--telemetry=disable",
      "--log-level=error",
    ], { stdio: ["ignore", "pipe", "pipe"], env, detached: true });
    child = started;
    // A binary that cannot be run (missing, not executable) is an 'error' event, which unheard ends the process with a
    // stack trace: it stops the start with a message naming the binary and where it comes from.
    let spawnError: Error | undefined;
    started.once("error", (err) => {
      spawnError = new Error(`FerretDB binary ${binary} could not be run (${err.message}): set FERRETDB_BIN to it, run \`node scripts/install-tools.mjs ferretdb\` (needs Go), or set MONGODB_URI`);
    });
    if (started.pid !== undefined) writeFileSync(path.join(stateDir, OWNER_FILE), JSON.stringify([...owners, { pid: started.pid, ownerPid: process.pid }]));
    const log = options.log;
    started.stdout?.on("data", (b: Buffer) => log?.(b.toString()));
    started.stderr?.on("data", (b: Buffer) => log?.(b.toString()));
    // If the owner exits without calling stop() (uncaught error, process.exit), take FerretDB down with it.
    const killOnExit = () => started.kill("SIGTERM");
    process.once("exit", killOnExit);
    started.once("exit", () => process.off("exit", killOnExit));
    try {
      await waitForPort(port, started, 30_000, () => spawnError);
      if (options.niceness !== undefined && started.pid !== undefined) lowerPriorityOfAllThreads(started.pid, options.niceness);
    } catch (err) {
      started.kill("SIGKILL");
      throw err;
    }
    const onExit = options.onExit;
    if (onExit) {
      started.once("exit", (code, signal) => {
        if (stopping) return;
        onExit(code, signal);
        restart();
      });
    }
  };
  const restart = (): void => {
    setTimeout(() => { if (!stopping) start().catch(restart); }, 1_000).unref();
  };
  await start();
  return {
    uri: `mongodb://127.0.0.1:${port}/gateway`,
    get pid() { return child.pid; },
    stop: () => new Promise<void>((resolve) => {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
    }),
  };
}
