import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, verifiedUser } from "../auth-helpers";
import { endBrowserTest, launchBrowser, signedInContext, startDashboardServer, type DashboardServer } from "./browser-support";

// The billing page's "Alerts and auto top-up" card (CONTRACT 11), in a real browser against the real server.
describe("billing page: alerts, auto top-up and saving a card", () => {
  let env: DashboardServer;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let page: Page | undefined;

  beforeAll(async () => {
    [env, browser] = await Promise.all([startDashboardServer(), launchBrowser()]);
  }, 120_000);
  afterEach(async (test) => {
    await endBrowserTest(test, page, context);
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  it("saves the low-balance threshold, explains the 409 of auto top-up without a card, and starts the setup checkout", async () => {
    const user = await verifiedUser(env.server);
    ({ context, page } = await signedInContext(browser, env.baseUrl, user.cookie));
    await page.goto(`${env.baseUrl}/dashboard/billing`);
    await page.getByRole("heading", { name: "Alerts and auto top-up" }).waitFor();
    await page.getByText("No card saved yet").waitFor();

    await page.getByLabel(/E-mail me when my balance falls below/).fill("2.50");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").waitFor();
    expect((await call(env.server, "GET", "/api/billing/settings", { cookie: user.cookie })).body.low_balance_threshold).toBe(2.5);

    await page.getByLabel(/Auto top-up: charge my saved card/).check();
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Save a card first").waitFor();
    expect((await call(env.server, "GET", "/api/billing/settings", { cookie: user.cookie })).body.auto_topup.enabled).toBe(false);

    const created = page.waitForResponse((r) => r.url().includes("billing.createSetupSession"));
    await page.getByRole("button", { name: "Save a card" }).click();
    expect((await created).status()).toBe(200);
  });
});
