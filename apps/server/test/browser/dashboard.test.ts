import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, mailsTo, uniqueEmail } from "../auth-helpers";
import { deliver, stripeEvent } from "../billing-support";
import { credit } from "../support/gateway-fixtures";
import { launchBrowser, screenshot, startDashboardServer, type DashboardServer } from "./browser-support";

/** A balance as the dashboard shows it: dollars with cents (the one money format; more digits only under a cent). */
const dollars = (n: number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(n);

// One new user walks through the dashboard as a person would: every step depends on the previous one.
describe("dashboard in a real browser", () => {
  let env: DashboardServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const email = uniqueEmail("browser");
  let apiKey = "";

  beforeAll(async () => {
    [env, browser] = await Promise.all([startDashboardServer(), launchBrowser()]);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: env.baseUrl });
    // The only non-local page is the hosted checkout; answer it locally instead of reaching the internet.
    await context.route((url) => url.origin !== env.baseUrl, (route) =>
      route.fulfill({ status: 200, contentType: "text/html", body: "<h1>Hosted checkout</h1>" }));
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
  }, 120_000);

  // A failed step leaves a picture of what the user would have seen.
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === "fail" && page) await screenshot(page, `failed-${ctx.task.name.replace(/\W+/g, "-")}`);
  });

  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  const url = (p: string) => `${env.baseUrl}${p}`;

  it("sends a visitor of a protected page to log in without showing the page first", async () => {
    await page.goto(url("/dashboard/keys"));
    await page.waitForURL(/\/login\?next=%2Fdashboard%2Fkeys$/);
    await page.getByRole("heading", { name: "Log in" }).waitFor();
    await screenshot(page, "login");
  });

  it("signs up with live password-rule feedback", async () => {
    await page.goto(url("/signup"));
    await page.getByLabel("Name").fill("Browser User");
    await page.getByLabel("E-mail").fill(email);
    const pw = page.getByLabel("Password", { exact: true });
    await pw.fill("short");
    expect(await page.locator('.rule[data-ok="true"]').count()).toBe(2);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("alert").filter({ hasText: "doesn't meet every rule" }).waitFor();
    await pw.fill(PASSWORD);
    expect(await page.locator('.rule[data-ok="true"]').count()).toBe(6);
    await screenshot(page, "signup");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "Check your e-mail" }).waitFor();
    await page.getByText(email).waitFor();
  });

  it("verifies the e-mail through the mailed link", async () => {
    const mail = mailsTo(env.server, email).find((m) => m.text.includes("/verify-email?token="));
    const link = mail?.text.match(/https?:\/\/\S+\/verify-email\?token=[\w-]+/)?.[0];
    expect(link).toBeDefined();
    expect(link?.startsWith(env.baseUrl)).toBe(true);
    await page.goto(link ?? "");
    await page.getByText("Your e-mail address is verified").waitFor();
    await screenshot(page, "verify-email");
  });

  it("logs in and lands on the overview", async () => {
    await page.goto(url("/login"));
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill("Wrong-Password-1");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("alert").filter({ hasText: "don't match" }).waitFor();
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/dashboard$/);
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.getByText("No requests yet").waitFor();
    await expect(page.getByTestId("balance").textContent()).resolves.toBe("$0.00");
  });

  it("creates a key, shows it once and copies it", async () => {
    const me = (await (await page.request.get(url("/api/auth/me"))).json()) as { user: { id: string } };
    await credit(env.server, me.user.id, 5);

    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByText("No keys yet").waitFor();
    await page.getByLabel("Name").fill("ci");
    await page.getByLabel(/Description/).fill("browser test");
    await page.getByRole("button", { name: "Create key" }).click();
    const shown = page.getByTestId("new-key");
    await shown.waitFor();
    apiKey = (await shown.textContent()) ?? "";
    expect(apiKey).toMatch(/^ak-live-[A-Za-z0-9]{32,}$/);
    await page.getByText("You won't see it again").waitFor();
    await page.getByRole("button", { name: "Copy key" }).click();
    await page.getByRole("button", { name: "Copied!" }).waitFor();
    // Evaluated as text: the server project has no DOM types.
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(apiKey);
    await screenshot(page, "keys-created");
    await page.getByRole("button", { name: /stored it safely/ }).click();
    await expect(shown.count()).resolves.toBe(0);
    await page.getByRole("cell", { name: "ci", exact: true }).waitFor();
  });

  it("shows a request made with the key in usage, the chart and the key's stats", async () => {
    const res = await fetch(`${env.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "textA-4", messages: [{ role: "user", content: "Hello from the browser test" }] }),
    });
    expect(res.status).toBe(200);

    await page.getByRole("link", { name: "Overview" }).click();
    const table = page.getByRole("table", { name: "Recent requests" });
    await table.getByText("textA-4").waitFor();
    await expect(table.getByText(/tokens \(\d+ in \/ \d+ out\)/).count()).resolves.toBe(1);
    await page.locator(".chart svg rect").first().waitFor();
    await screenshot(page, "overview");

    await page.getByRole("link", { name: "API keys" }).click();
    const row = page.locator("tr", { hasText: "ci" });
    await expect.poll(async () => {
      await page.reload();
      return row.locator('td[data-label="Uses"]').textContent();
    }, { timeout: 10_000, interval: 1000 }).toBe("1");
    expect(await row.locator('td[data-label="Last used"]').textContent()).not.toBe("Never");
  });

  it("revokes the key after confirmation, and the key stops working", async () => {
    // Escape backs out of the confirmation and hands focus back to the Revoke button (keyboard users)
    await page.getByRole("button", { name: "Revoke key ci" }).click();
    await page.keyboard.press("Escape");
    await page.getByRole("button", { name: "Revoke key ci" }).and(page.locator(":focus")).waitFor();
    await page.getByRole("button", { name: "Revoke key ci" }).click();
    await page.getByRole("button", { name: "Yes, revoke" }).click();
    await page.getByText("No keys yet").waitFor();
    await screenshot(page, "keys");
    const res = await fetch(`${env.server.url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(401);
  });

  it("streams a chat answer in the playground with tokens and cost", async () => {
    await page.getByRole("link", { name: "Playground" }).click();
    await page.getByLabel("Model").selectOption("textA-4");
    await page.getByLabel("Message").fill("Say hello");
    await page.getByRole("button", { name: "Send" }).click();
    const usage = page.getByTestId("answer-usage");
    await usage.waitFor();
    expect(await usage.textContent()).toMatch(/\d+ prompt \+ \d+ completion tokens · \$\d/);
    expect((await page.getByTestId("assistant-message").textContent())?.trim().length).toBeGreaterThan(0);
    await screenshot(page, "playground");
  });

  it("sends the buyer to the checkout URL from the billing page", async () => {
    await page.getByRole("link", { name: "Billing" }).click();
    await page.getByRole("button", { name: "Buy $50.00" }).waitFor();
    await page.getByText("+ $5.00 bonus").waitFor();
    await screenshot(page, "billing");
    const created = page.waitForResponse((r) => r.url().includes("billing.createCheckoutSession"));
    await page.getByRole("button", { name: "Buy $10.00" }).click();
    expect((await created).status()).toBe(200);
    // The page leaves for the url the API returned (stripe-mock's hosted checkout, answered locally above).
    await page.waitForURL((u) => u.origin !== env.baseUrl && u.protocol === "https:");
    await page.getByRole("heading", { name: "Hosted checkout" }).waitFor();
  });

  it("shows the credits and the payment when the webhook confirms it, back from checkout without a reload", async () => {
    await page.goto(url("/dashboard/billing?checkout=success"));
    await page.getByText("Payment received").waitFor();
    const me = (await (await page.request.get(url("/api/auth/me"))).json()) as { user: { id: string } };
    const before = ((await (await page.request.get(url("/api/billing/credits"))).json()) as { balance: number }).balance;
    await expect(page.getByTestId("billing-balance").textContent()).resolves.toBe(dollars(before));
    await page.getByRole("heading", { name: "Payment history" }).waitFor();
    await page.waitForLoadState("networkidle");
    await expect(page.getByRole("cell", { name: "Credit purchase" }).count()).resolves.toBe(0);
    const intent = { id: `pi_browser_${Date.now()}`, object: "payment_intent", amount: 1000, amount_received: 1000, currency: "usd", status: "succeeded", metadata: { user_id: me.user.id } };
    expect((await deliver(env.server, stripeEvent("payment_intent.succeeded", intent))).status).toBe(200);
    await page.getByTestId("billing-balance").filter({ hasText: dollars(before + 10) }).waitFor({ timeout: 12_000 });
    await page.getByRole("cell", { name: "Credit purchase" }).waitFor();
  });

  it("cancels the subscription at the end of its period after a confirmation", async () => {
    const me = (await (await page.request.get(url("/api/auth/me"))).json()) as { user: { id: string } };
    const t = Math.floor(Date.now() / 1000);
    const sub = {
      id: `sub_browser_${Date.now()}`, object: "subscription", status: "active", customer: `cus_browser_${Date.now()}`,
      metadata: { user_id: me.user.id, plan_id: "pro" }, cancel_at_period_end: false,
      current_period_start: t, current_period_end: t + 30 * 86_400, items: { object: "list", data: [] },
    };
    expect((await deliver(env.server, stripeEvent("customer.subscription.created", sub, { created: t }))).status).toBe(200);
    await page.goto(url("/dashboard/billing"));
    const opener = page.getByRole("button", { name: "Cancel subscription" });
    await opener.click();
    await page.getByRole("button", { name: "Keep it" }).click();
    await expect(opener.evaluate((el) => el === el.ownerDocument.activeElement)).resolves.toBe(true);
    await opener.click();
    const cancelled = page.waitForResponse((r) => r.url().includes("billing.cancelSubscription"));
    await page.getByRole("button", { name: "Yes, cancel" }).click();
    expect((await cancelled).status()).toBe(200);
    await page.getByText(/Your Pro plan is cancelled and ends on/).waitFor();
    // focus moved from the gone "Yes, cancel" to the notice, not back to the top of the page
    await expect(page.getByText(/Your Pro plan is cancelled and ends on/).evaluate((el) => el === el.ownerDocument.activeElement)).resolves.toBe(true);
    const view = (await (await page.request.get(url("/api/billing/subscription"))).json()) as { subscription: { cancel_at_period_end: boolean }; plan: { id: string } };
    expect(view).toMatchObject({ subscription: { cancel_at_period_end: true }, plan: { id: "pro" } });
  });

  it("shows settings and the status of each dependency", async () => {
    await page.goto(url("/settings"));
    await page.getByRole("heading", { name: "Settings" }).waitFor();
    await expect(page.getByLabel("Name").inputValue()).resolves.toBe("Browser User");
    await screenshot(page, "settings");
    await page.getByRole("link", { name: "Status" }).click();
    for (const service of ["database", "text_provider", "speech_provider", "payment_provider"]) {
      await page.locator(`[data-service="${service}"]`).waitFor();
    }
    await screenshot(page, "status");
  });

  it("is usable at phone width", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(url("/dashboard"));
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const menu = page.getByRole("button", { name: "Menu" });
    await menu.click();
    await page.getByRole("link", { name: "Billing" }).focus();
    await page.keyboard.press("Escape");
    await expect(menu.getAttribute("aria-expanded")).resolves.toBe("false");
    await expect(menu.evaluate((el) => el === el.ownerDocument.activeElement)).resolves.toBe(true);
    await menu.click();
    await page.getByRole("link", { name: "Billing" }).click();
    await page.waitForURL(/\/dashboard\/billing$/);
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, "billing-phone");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("sends an expired session to log in and back to the page it was on", async () => {
    await page.goto(url("/dashboard/billing"));
    await page.getByRole("heading", { name: "Billing" }).waitFor();
    await page.waitForLoadState("networkidle");
    env.server.clock.advance(8 * 86_400_000);
    await page.getByRole("link", { name: "API keys" }).click();
    await page.waitForURL(/\/login\?next=%2Fdashboard%2Fkeys&reason=expired$/);
    await page.getByText("Your session has expired").waitFor();
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/dashboard\/keys$/);
    await page.getByRole("heading", { name: "API keys" }).waitFor();
  });

  it("logs out to the login page, and a deleted account lands on login saying so", async () => {
    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(/\/login$/);
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/dashboard$/);
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByLabel(/Type delete my account/).fill("delete my account");
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole("button", { name: "Delete my account permanently" }).click();
    await page.waitForURL(/\/login\?deleted=1$/);
    await page.getByText("Your account was deleted.").waitFor();
    await screenshot(page, "account-deleted");
  });
});
