import net from "node:net";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifiedUser } from "../auth-helpers";
import { launchBrowser, startDashboardServer, type DashboardServer } from "./browser-support";

/** A local port nothing listens on: the payment processor is unreachable. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// The billing page when Stripe does not answer: the user reads about payments, not about model providers.
describe("billing page with the payment processor down", () => {
  let env: DashboardServer;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    const port = await deadPort();
    [env, browser] = await Promise.all([startDashboardServer({ STRIPE_API_BASE: `http://127.0.0.1:${port}` }), launchBrowser()]);
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await env?.close();
  });

  it("says the payment processor failed when a checkout cannot be created", async () => {
    const user = await verifiedUser(env.server);
    context = await browser.newContext();
    context.setDefaultTimeout(10_000);
    const [name, value] = user.cookie.split(/=(.*)/s) as [string, string];
    await context.addCookies([{ name, value, url: env.baseUrl }]);
    const page = await context.newPage();
    await page.goto(`${env.baseUrl}/dashboard/billing`);
    const created = page.waitForResponse((r) => r.url().includes("billing.createCheckoutSession"));
    await page.getByRole("button", { name: "Buy $10.00" }).click();
    const res = await created;
    expect(res.status()).toBe(502);
    const alert = page.getByRole("alert").filter({ hasText: "payment processor" });
    await alert.waitFor();
    expect(await alert.textContent()).toContain("The payment processor could not complete the request. Nothing was charged; please try again shortly.");
    await expect(page.getByText(/model provider/).count()).resolves.toBe(0);
    // the buttons are free again for that retry
    await expect(page.getByRole("button", { name: "Buy $10.00" }).isEnabled()).resolves.toBe(true);
  });
});
