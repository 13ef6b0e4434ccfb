import { spawn } from "node:child_process";
import path from "node:path";
import { findFerretdbBinary, freePort } from "@gw/db";

export interface StripeMock {
  url: string;
  stop(): Promise<void>;
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** Starts the official stripe-mock (built by scripts/install-tools.mjs) on a free loopback port. */
export async function startStripeMock(): Promise<StripeMock> {
  const binary = path.join(path.dirname(findFerretdbBinary()), "stripe-mock");
  const port = await freePort();
  // stripe-mock also opens HTTPS, on the fixed port 12112 unless told otherwise: a second run would fail to start
  const child = spawn(binary, ["-http-addr", `127.0.0.1:${port}`, "-https-addr", "127.0.0.1:"], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/v1/customers`, 30_000);
  return {
    url,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    }),
  };
}
