import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { verifiedUser } from "../auth-helpers";
import { deliver, stripeEvent } from "../billing-support";
import { credit } from "../support/gateway-fixtures";
import { endBrowserTest, launchBrowser, screenshot, signedInContext, startDashboardServer, type DashboardServer } from "./browser-support";

// The page's own globals, for a function that runs in the browser (the server project has no DOM types).
interface Painted { parentElement: Painted | null }
declare const getComputedStyle: (el: Painted) => { color: string; backgroundColor: string };

/** The WCAG contrast ratio of an element's text against the background of its nearest ancestor that paints one. */
function contrastInPage(el: Painted): number {
  const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
  const lin = (v: number) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  const lum = (c: string) => {
    const [r = 0, g = 0, b = 0] = rgb(c);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const transparent = (c: string) => c === "transparent" || c === "rgba(0, 0, 0, 0)";
  let bg: Painted | null = el;
  while (bg && transparent(getComputedStyle(bg).backgroundColor)) bg = bg.parentElement;
  const a = lum(getComputedStyle(el).color);
  const b = lum(bg ? getComputedStyle(bg).backgroundColor : "rgb(255, 255, 255)");
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

// What a browser walk-through of the dashboard found (issue 33), each checked as a user meets it.
describe("dashboard walk-through fixes in a real browser", () => {
  let env: DashboardServer;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let page: Page | undefined;

  beforeAll(async () => {
    [env, browser] = await Promise.all([startDashboardServer(), launchBrowser()]);
  }, 120_000);

  afterEach(async (ctx) => {
    await endBrowserTest(ctx, page, context);
    context = undefined;
    page = undefined;
  });

  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  const url = (p: string) => `${env.baseUrl}${p}`;

  async function signedIn(width = 1280): Promise<{ page: Page; userId: string }> {
    const user = await verifiedUser(env.server);
    ({ context, page } = await signedInContext(browser, env.baseUrl, user.cookie, { viewport: { width, height: 900 } }));
    return { page, userId: user.id };
  }

  async function chat(p: Page, content = "hello there"): Promise<void> {
    const res = await p.request.post(url("/v1/chat/completions"), { data: { model: "textA-4", messages: [{ role: "user", content }] } });
    expect(res.status()).toBe(200);
  }

  it("says so when the recent requests cannot be loaded, instead of showing nothing", async () => {
    const { page } = await signedIn();
    await page.route((u) => u.pathname === "/api/usage", (route) =>
      route.fulfill({ status: 500, contentType: "application/json", body: JSON.stringify({ error: { message: "boom", type: "api_error", code: "internal_error" } }) }));
    await page.goto(url("/dashboard"));
    const card = page.getByRole("region", { name: "Recent requests" });
    await card.getByRole("alert").filter({ hasText: "Recent requests could not be loaded" }).waitFor({ timeout: 20_000 });
    await expect(card.getByRole("alert").textContent()).resolves.toContain("Something went wrong on our side");
  });

  it("draws the chart's axis labels at least 11 px tall at 375 px", async () => {
    const { page, userId } = await signedIn(375);
    await credit(env.server, userId, 5);
    await chat(page);
    await page.goto(url("/dashboard"));
    await page.locator(".chart svg rect").first().waitFor();
    const heights = await page.locator(".chart .axis").evaluateAll((els) => els.map((el) => el.getBoundingClientRect().height));
    expect(heights.length).toBeGreaterThan(2);
    expect(Math.min(...heights)).toBeGreaterThanOrEqual(11);
    expect(await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth")).toBeLessThanOrEqual(0);
    await screenshot(page, "overview-chart-phone");
  });

  it("gives the playground bubble's muted text at least 4.5:1 contrast", async () => {
    const { page, userId } = await signedIn();
    await credit(env.server, userId, 5);
    await page.goto(url("/dashboard/playground"));
    await page.getByLabel("Model").selectOption("textA-4");
    await page.getByLabel("Message").fill("Say hello");
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByTestId("answer-usage").waitFor();
    for (const selector of [".msg-assistant .msg-role", ".msg-assistant .msg-meta", ".msg-user .msg-role"]) {
      const ratio = await page.locator(selector).first().evaluate(contrastInPage);
      expect(ratio, selector).toBeGreaterThanOrEqual(4.5);
    }
    await screenshot(page, "playground-contrast");
  });

  it("shows money one way: dollars with cents, more digits only under a cent", async () => {
    const { page, userId } = await signedIn();
    await credit(env.server, userId, 9.9);
    await chat(page, "word ".repeat(4000).trim()); // $0.012002 at textA-4's prices: $9.887998 left
    await page.goto(url("/dashboard"));
    await expect(page.getByTestId("balance").textContent()).resolves.toBe("$9.89");
    await page.getByText("Total: $0.01").waitFor();
    await page.goto(url("/dashboard/billing"));
    await expect(page.getByTestId("billing-balance").textContent()).resolves.toBe("$9.89");
    await page.getByRole("button", { name: "Buy $10.00" }).waitFor();
    // every amount on the page: $ and cents, or a sub-cent amount with its digits
    // every amount the dashboard formats (plan feature lines are the operator's own words)
    const texts = await page.locator("main :is(.stat-value, .package p, .plan-price, td)").allTextContents();
    const amounts = texts.join(" ").match(/\$[\d,]+(\.\d+)?/g) ?? [];
    expect(amounts.length).toBeGreaterThan(3);
    for (const amount of amounts) expect(amount).toMatch(/^\$[\d,]+\.\d{2}$|^\$0\.00\d+$/);
  });

  it("explains why the payment history's balance after jumps: request charges are not listed", async () => {
    const { page, userId } = await signedIn();
    await credit(env.server, userId, 5);
    await chat(page);
    await page.goto(url("/dashboard/billing"));
    await page.getByTestId("history-note").filter({ hasText: "Request charges are not listed here" }).waitFor();
    await page.getByTestId("history-note").getByRole("link", { name: "Usage" }).click();
    await page.waitForURL(/\/dashboard\/usage$/);
  });

  it("replaces the 'credits appear once the payment is confirmed' notice once they arrived", async () => {
    const { page, userId } = await signedIn();
    // The hosted checkout is the only non-local page; answer it locally.
    await page.route((u) => u.origin !== env.baseUrl, (route) => route.fulfill({ status: 200, contentType: "text/html", body: "<h1>Hosted checkout</h1>" }));
    await page.goto(url("/dashboard/billing"));
    await page.getByRole("button", { name: "Buy $10.00" }).click();
    await page.getByRole("heading", { name: "Hosted checkout" }).waitFor();
    await page.goto(url("/dashboard/billing?checkout=success"));
    await page.getByText("Your credits appear as soon as the payment is confirmed").waitFor();
    await page.waitForLoadState("networkidle");
    const intent = { id: `pi_fix_${Date.now()}`, object: "payment_intent", amount: 1000, amount_received: 1000, currency: "usd", status: "succeeded", metadata: { user_id: userId } };
    expect((await deliver(env.server, stripeEvent("payment_intent.succeeded", intent))).status).toBe(200);
    await page.getByText("Payment confirmed: the credits are in your balance.").waitFor({ timeout: 15_000 });
    await expect(page.getByText("Your credits appear as soon as the payment is confirmed").count()).resolves.toBe(0);
    // a later visit to the same address, the credits long there, no longer promises them
    await page.reload();
    await page.getByText("Payment confirmed: the credits are in your balance.").waitFor();
    await expect(page.getByText("Your credits appear as soon as the payment is confirmed").count()).resolves.toBe(0);
  });

  it("keeps the settings forms to a readable width", async () => {
    const { page } = await signedIn();
    await page.goto(url("/settings"));
    await page.getByRole("heading", { name: "Settings" }).waitFor();
    const widths = await page.locator("main form").evaluateAll((els) => els.map((el) => el.getBoundingClientRect().width));
    expect(widths).toHaveLength(3);
    for (const w of widths) expect(w).toBeLessThanOrEqual(560);
    await screenshot(page, "settings-width");
  });

  it("shows customers a generic state for a failing service, not the upstream's failure text", async () => {
    context = await browser.newContext();
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    const raw = "textB: 401 invalid x-api-key sk-ant-secret at https://upstream.internal:8443/v1/messages";
    await page.route((u) => u.pathname.startsWith("/api/trpc/") && u.pathname.includes("status.external"), (route) => route.fulfill({
      status: 200,
      contentType: "application/json",
      body: JSON.stringify([{ result: { data: {
        status: "degraded", overall_status: "degraded", timestamp: new Date().toISOString(),
        services: {
          database: { status: "healthy", response_time: 3, last_check: new Date().toISOString() },
          text_provider: { status: "unhealthy", response_time: 120, last_check: new Date().toISOString(), issue: raw },
          speech_provider: { status: "degraded", response_time: 2400, last_check: new Date().toISOString(), issue: "slow response (2400 ms)" },
          payment_provider: { status: "unknown", response_time: 0, last_check: new Date().toISOString() },
        },
      } } }]),
    }));
    await page.goto(url("/status"));
    const text = page.locator('[data-service="text_provider"]');
    await text.getByText("Requests that need this service may fail.").waitFor();
    await page.locator('[data-service="speech_provider"]').getByText("Responding more slowly than usual.").waitFor();
    const body = (await page.locator("main").textContent()) ?? "";
    expect(body).not.toContain("x-api-key");
    expect(body).not.toContain("upstream.internal");
    expect(body).not.toContain("slow response");
    await screenshot(page, "status-generic");
  });
});
