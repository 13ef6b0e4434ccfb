import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { claimWriterSlot } from "./writer-slot";

describe("claimWriterSlot", () => {
  const dirs: string[] = [];
  const fresh = (): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "gw-slots-"));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("gives instances running at once different slots, and a restart the slot released before", () => {
    const dir = fresh();
    const first = claimWriterSlot(dir);
    const second = claimWriterSlot(dir);
    expect(first.id).toMatch(/^w_[0-9A-Za-z]{12}-1$/);
    expect(second.id).toBe(first.id.replace(/-1$/, "-2"));
    first.release();
    const restarted = claimWriterSlot(dir);
    expect(restarted.id).toBe(first.id);
    // another DATA_DIR writes other rows
    expect(claimWriterSlot(fresh()).id).not.toBe(first.id);
    second.release();
    restarted.release();
  });

  it("takes over the slot of a process that died holding it, not the slot of one that runs", async () => {
    const dir = fresh();
    mkdirSync(path.join(dir, "writer-slots"));
    // a pid that no process has any more
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const running = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(path.join(dir, "writer-slots", "1.lock"), `${running.pid} 0123456789abcdef`);
      writeFileSync(path.join(dir, "writer-slots", "2.lock"), `${dead} 0123456789abcdef`);
      const slot = claimWriterSlot(dir);
      expect(slot.id).toMatch(/-2$/);
      // no takeover marker is left behind
      expect(readdirSync(path.join(dir, "writer-slots")).sort()).toEqual(["1.lock", "2.lock", "name"]);
      slot.release();
      expect(readdirSync(path.join(dir, "writer-slots")).sort()).toEqual(["1.lock", "name"]);
    } finally {
      running.kill();
    }
  });

  it("leaves a slot alone while another start is taking it over", () => {
    const dir = fresh();
    const slots = path.join(dir, "writer-slots");
    mkdirSync(slots);
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const mark = `${dead} 0123456789abcdef`;
    writeFileSync(path.join(slots, "1.lock"), mark);
    // the marker another start created for that holder
    writeFileSync(path.join(slots, `1.lock.takeover-${dead}-0123456789abcdef`), "");
    expect(claimWriterSlot(dir).id).toMatch(/-2$/);
  });
});
