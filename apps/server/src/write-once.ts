import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * The content of a file that is written once and kept: made by `make` when the file does not exist yet. It is written
 * whole under another name and linked in place, so that two servers starting at once keep the same content (the
 * second's does not overwrite the first's) and neither reads a half-written file.
 */
export function writeOnce(file: string, make: () => string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const draft = `${file}.${process.pid}-${randomBytes(4).toString("hex")}`;
  writeFileSync(draft, make(), { mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    unlinkSync(draft);
  }
  return readFileSync(file, "utf8");
}
