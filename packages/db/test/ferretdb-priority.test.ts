import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { BACKGROUND_NICENESS, startFerretdb, type EmbeddedMongo } from "../src/ferretdb";

/** The nice value of every thread of a process (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNiceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    // the fields after the command name, which is in parentheses and may hold spaces
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[16]);
  });
}

describe.runIf(process.platform === "linux")("embedded FerretDB CPU priority", () => {
  const dirs: string[] = [];
  const started: EmbeddedMongo[] = [];
  const start = async (niceness?: number) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ferret-nice-"));
    dirs.push(dir);
    const mongo = await startFerretdb({ dir, niceness });
    started.push(mongo);
    return mongo;
  };
  afterAll(async () => {
    await Promise.all(started.map((m) => m.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("runs every FerretDB thread at the background priority it is given", async () => {
    const mongo = await start(BACKGROUND_NICENESS);
    expect(threadNiceness(mongo.pid ?? 0).length).toBeGreaterThan(1); // Go runs several threads: each one is lowered, not just the first
    // threads started while the first pass ran are lowered by the next ones (within 2 s)
    await vi.waitFor(() => expect(new Set(threadNiceness(mongo.pid ?? 0))).toEqual(new Set([BACKGROUND_NICENESS])), { timeout: 5_000, interval: 100 });
  });

  it("leaves the priority alone without a niceness", async () => {
    const mongo = await start();
    expect(new Set(threadNiceness(mongo.pid ?? 0))).toEqual(new Set([os.getPriority(process.pid)]));
  });
});
