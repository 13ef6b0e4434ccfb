// Start-up's part of key usage: a writer identity that DATA_DIR keeps across restarts.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { newId } from "@gw/shared";
import { writeOnce } from "./write-once";

/** A writer identity held by this process until `release`. */
export interface WriterSlot {
  id: string;
  release(): void;
}

/** Slots tried before a start settles for a one-off identity. */
const MAX_SLOTS = 64;

/** The lock files held by this process (several app instances may run in one process, as in the tests). */
const heldHere = new Set<string>();

/** This process's mark in the lock files it holds: its pid, and a token that tells it from an earlier holder of that pid. */
const holderMark = `${process.pid} ${randomBytes(8).toString("hex")}`;

/** Creates a file that must not exist yet; false when it does. */
function createNew(file: string, content: string): boolean {
  try {
    writeFileSync(file, content, { flag: "wx", mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** Whether the process that wrote this mark may still run: its pid exists (another user's counts), and is not ours. */
function holderAlive(mark: string): boolean {
  const pid = Number(mark.split(" ")[0]);
  // our own pid with another token: a run before a container restart, whose pid this process was given again
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes a slot whose holder died without releasing it. Only the process that creates the takeover marker naming that
 * holder may replace the lock, and only while the lock still names it: two starts that both found the holder dead
 * cannot both take the slot.
 */
function takeOver(lock: string): boolean {
  const mark = readOrNull(lock);
  if (mark === null) return createNew(lock, holderMark);
  if (holderAlive(mark)) return false;
  const marker = `${lock}.takeover-${mark.replace(/[^0-9A-Za-z]+/g, "-")}`;
  if (!createNew(marker, holderMark)) return false;
  try {
    if (readOrNull(lock) !== mark) return false;
    // replaced whole (a rename), so that no other start reads the lock empty
    const draft = `${lock}.${randomBytes(4).toString("hex")}`;
    writeFileSync(draft, holderMark, { mode: 0o600 });
    renameSync(draft, lock);
    return true;
  } finally {
    unlinkSync(marker);
  }
}

/**
 * The lowest writer slot under `DATA_DIR/writer-slots` that no running process holds, so that a restarted server
 * writes the rows its previous run wrote rather than adding new ones. Slot n is held through the lock file `<n>.lock`,
 * which names the holder's pid; one whose holder died (a crash) is taken over. All slots held: a one-off identity.
 */
export function claimWriterSlot(dataDir: string): WriterSlot {
  const dir = path.join(dataDir, "writer-slots");
  mkdirSync(dir, { recursive: true });
  // the random name of this DATA_DIR's writers: servers on other DATA_DIRs write other rows
  const name = writeOnce(path.join(dir, "name"), () => newId("w", 12)).trim();
  for (let n = 1; n <= MAX_SLOTS; n++) {
    const lock = path.join(dir, `${n}.lock`);
    if (heldHere.has(lock) || !(createNew(lock, holderMark) || takeOver(lock))) continue;
    heldHere.add(lock);
    return {
      id: `${name}-${n}`,
      release() {
        if (!heldHere.delete(lock)) return;
        if (readOrNull(lock) === holderMark) rmSync(lock, { force: true });
      },
    };
  }
  return { id: newId("w", 16), release: () => undefined };
}
