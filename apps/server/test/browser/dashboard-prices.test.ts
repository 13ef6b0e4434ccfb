import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MODELS } from "@gw/config";
import { verifiedUser } from "../auth-helpers";
import { credit } from "../support/gateway-fixtures";
import { endBrowserTest, launchBrowser, startDashboardServer, type DashboardServer } from "./browser-support";

// Prices of 1.2 micro-dollars a token or character: the gateway rounds each charge up to a whole micro-dollar, so the
// listed prices times the usage are not what was charged. The playground shows what was charged.
describe("dashboard playground with prices that are fractions of a micro-dollar per unit", () => {
  let env: DashboardServer;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "gw-prices-"));
    const models = DEFAULT_MODELS.map((m) =>
      m.id === "textA-4" ? { ...m, pricing: { inputPer1k: 1_200, outputPer1k: 1_200 } }
        : m.id === "speechvendor-tts" ? { ...m, pricing: { per1kChars: 1_200 } } : m);
    writeFileSync(path.join(dir, "models.json"), JSON.stringify({ models }));
    [env, browser] = await Promise.all([startDashboardServer({ CONFIG_FILE: path.join(dir, "models.json") }), launchBrowser()]);
  }, 120_000);

  afterEach(async (ctx) => {
    await endBrowserTest(ctx, page, context);
    context = undefined;
    page = undefined;
  });

  afterAll(async () => {
    await browser?.close();
    await env?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const url = (p: string) => `${env.baseUrl}${p}`;

  it("shows the cost the usage API and X-Request-Cost state for a chat answer and for speech", async () => {
    const user = await verifiedUser(env.server);
    await credit(env.server, user.id, 5);
    context = await browser.newContext();
    context.setDefaultTimeout(10_000);
    const [name, value] = user.cookie.split(/=(.*)/s) as [string, string];
    await context.addCookies([{ name, value, url: env.baseUrl }]);
    const tab = await context.newPage();
    page = tab;
    const lastCost = async () => ((await (await tab.request.get(url("/api/usage?per_page=1"))).json()) as { data: Array<{ cost: number }> }).data[0]?.cost;

    await page.goto(url("/dashboard/playground"));
    await page.getByLabel("Model").selectOption("textA-4");
    await page.getByLabel("Message").fill("Hello there");
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByTestId("answer-usage").waitFor();
    // 2 prompt and 3 completion tokens: ceil(2.4) + ceil(3.6) = 7 micro-dollars, where the listed prices give 6
    expect(await page.getByTestId("answer-usage").textContent()).toBe("2 prompt + 3 completion tokens · $0.000007");
    await expect.poll(lastCost).toBe(0.000007);

    await page.getByLabel("Model").selectOption("speechvendor-tts");
    await page.getByRole("textbox", { name: "Text" }).fill("a");
    const answer = page.waitForResponse((res) => res.url().endsWith("/api/v1/task"));
    await page.getByRole("button", { name: "Generate speech" }).click();
    expect((await answer).headers()["x-request-cost"]).toBe("0.000002");
    // one character: ceil(1.2) = 2 micro-dollars, where the listed price gives 1.2
    await page.getByText("1 characters · $0.000002").waitFor();
    await expect.poll(lastCost).toBe(0.000002);
  });
});
