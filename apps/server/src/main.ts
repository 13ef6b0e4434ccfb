// The server's entry point. It loads only the configuration before tuning the heap, and the application after:
// V8 applies a heap growth setting from the next full collection on, so it must be in place before module
// loading grows the heap (set later, the first load spike still grows to V8's default limit).
import { fileURLToPath } from "node:url";
import { loadConfig, loadEnvFile } from "@gw/config";
import { applyHeapTuning } from "./heap-tuning";
import { withSessionSecret } from "./session-secret";

try {
  // the project root (this file is apps/server/dist/main.js): its .env, when present, under the process environment
  loadEnvFile(fileURLToPath(new URL("../../../", import.meta.url)));
  const config = withSessionSecret(loadConfig());
  applyHeapTuning(config);
  const { serve } = await import("./serve");
  await serve(config);
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
