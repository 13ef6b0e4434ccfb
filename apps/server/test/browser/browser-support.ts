import { mkdirSync } from "node:fs";
import net from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core";
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { RELAXED_LIMITS } from "../auth-helpers";
import { startTestServer, type TestServer } from "../harness";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
export const SCREENSHOT_DIR = path.join(REPO_ROOT, "test-artifacts", "screenshots");

/** Debian's chromium, never a downloaded one (see the CI image). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * A TCP pass-through on a port chosen before the server starts, so PUBLIC_URL can name the origin the browser uses:
 * the CSRF check compares Origin with PUBLIC_URL, and mailed links point at PUBLIC_URL.
 */
async function startForwarder(): Promise<{ port: number; target: (port: number) => void; close: () => Promise<void> }> {
  let targetPort = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    target: (port) => { targetPort = port; },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface DashboardServer {
  server: TestServer;
  upstreams: FakeUpstreams;
  /** the origin the browser uses (PUBLIC_URL) */
  baseUrl: string;
  close(): Promise<void>;
}

/** `env` adds or overrides server settings (e.g. a STRIPE_API_BASE nobody answers at). */
export async function startDashboardServer(env: Record<string, string> = {}): Promise<DashboardServer> {
  const upstreams = await startFakeUpstreams();
  const forwarder = await startForwarder();
  const baseUrl = `http://127.0.0.1:${forwarder.port}`;
  const server = await startTestServer({ env: { ...upstreams.env, ...RELAXED_LIMITS, PUBLIC_URL: baseUrl, ...env } });
  forwarder.target(Number(new URL(server.url).port));
  return {
    server,
    upstreams,
    baseUrl,
    async close() {
      await forwarder.close();
      await server.close();
      await upstreams.close();
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** The end of one test of a suite with a browser context per test: a screenshot when it failed, then the context closed. */
export async function endBrowserTest(test: { task: { name: string; result?: { state?: string } } }, page: Page | undefined, context: BrowserContext | undefined): Promise<void> {
  if (test.task.result?.state === "fail" && page) await screenshot(page, `failed-${test.task.name.replace(/\W+/g, "-")}`);
  await context?.close();
}

/** A fresh browser context signed in with `cookie` (the session's `name=value`) on `baseUrl`, and its first page. */
export async function signedInContext(browser: Browser, baseUrl: string, cookie: string, options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(10_000);
  const [name, value] = cookie.split(/=(.*)/s) as [string, string];
  await context.addCookies([{ name, value, url: baseUrl }]);
  return { context, page: await context.newPage() };
}
