// The server's entry point. It loads only the configuration before tuning the heap, and the application after:
// V8 applies a heap growth setting from the next full collection on, so it must be in place before module
// loading grows the heap (set later, the first load spike still grows to V8's default limit).
import { loadConfig } from "@gw/config";
import { applyHeapTuning } from "./heap-tuning";

try {
  const config = loadConfig();
  applyHeapTuning(config);
  const { serve } = await import("./serve");
  await serve(config);
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
