import v8 from "node:v8";
import type { Config } from "@gw/config";

/**
 * Bounds how far V8 grows the old generation past the live heap (HEAP_GROWING_PERCENT). Under load the gateway
 * promotes short-lived request state steadily; left alone V8 lets that garbage grow to several times the live
 * heap before collecting it, which is where peak RSS came from (docs/performance.md). The flag is read at
 * every full collection, so setting it at start is enough.
 */
export function applyHeapTuning(config: Pick<Config, "heapGrowingPercent">): void {
  if (config.heapGrowingPercent > 0) v8.setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
}
