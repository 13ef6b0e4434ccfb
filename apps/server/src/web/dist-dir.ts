import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Finds apps/web/dist whether this code runs from the bundle (apps/server/dist/main.js)
 * or from sources under vitest (apps/server/src/web/*.ts); the working directory is the last resort.
 */
export function findWebDist(from: string = path.dirname(fileURLToPath(import.meta.url))): string | undefined {
  const candidates = [
    path.resolve(from, "../../web/dist"),
    path.resolve(from, "../../../web/dist"),
    path.resolve(process.cwd(), "apps/web/dist"),
  ];
  return candidates.find((dir) => existsSync(path.join(dir, "index.html")));
}
