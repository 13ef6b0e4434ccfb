import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { freePort } from "@gw/db";

/** A throwaway Debian redis-server on a free loopback port, no persistence. */
export async function startRedis(): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn("/usr/bin/redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => { s.destroy(); resolve(true); });
      s.once("error", () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) throw new Error("redis-server did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, process: child };
}
