import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { verifiedUser } from "../auth-helpers";
import { deliver, stripeEvent } from "../billing-support";
import { credit } from "../support/gateway-fixtures";
import { endBrowserTest, launchBrowser, screenshot, signedInContext, startDashboardServer, type DashboardServer } from "./browser-support";

// What a careless or unusual user does: double clicks, long names, a phone, a screen reader. Each test has its own account.
describe("dashboard robustness in a real browser", () => {
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

  /** A verified user signed in in a fresh browser context of the given width. */
  async function signedIn(width = 1280, email?: string, timezoneId?: string): Promise<{ page: Page; userId: string }> {
    const user = await verifiedUser(env.server, email);
    ({ context, page } = await signedInContext(browser, env.baseUrl, user.cookie, { viewport: { width, height: 900 }, timezoneId }));
    // The hosted checkout is the only non-local page; answer it locally.
    await context.route((u) => u.origin !== env.baseUrl, (route) =>
      route.fulfill({ status: 200, contentType: "text/html", body: "<h1>Hosted checkout</h1>" }));
    return { page, userId: user.id };
  }

  /** The tRPC procedures the page calls, one entry per call (a batch names several). */
  function recordCalls(p: Page, procedure: string): string[] {
    const calls: string[] = [];
    p.on("request", (req) => {
      const u = new URL(req.url());
      if (!u.pathname.startsWith("/api/trpc/")) return;
      for (const name of u.pathname.slice("/api/trpc/".length).split(",")) if (name === procedure) calls.push(name);
    });
    return calls;
  }

  /** Console errors and uncaught exceptions of a page (a failed request is logged as a console error too). */
  function recordErrors(p: Page): string[] {
    const errors: string[] = [];
    p.on("console", (msg) => { if (msg.type() === "error") errors.push(`${p.url()}: ${msg.text()}`); });
    p.on("pageerror", (err) => errors.push(`${p.url()}: ${err.message}`));
    return errors;
  }

  it("logs no console error on any page, signed out or signed in", async () => {
    context = await browser.newContext();
    page = await context.newPage();
    const signedOut = recordErrors(page);
    for (const path of ["/login", "/signup", "/forgot-password", "/status", "/dashboard"]) {
      await page.goto(url(path));
      await page.waitForLoadState("networkidle");
    }
    // /dashboard sent the signed-out visitor to the login page
    expect(new URL(page.url()).pathname).toBe("/login");
    expect(signedOut).toEqual([]);
    await context.close();

    const { page: signedInPage } = await signedIn();
    const errors = recordErrors(signedInPage);
    for (const path of ["/dashboard", "/dashboard/keys", "/dashboard/billing", "/dashboard/playground", "/settings", "/status"]) {
      await signedInPage.goto(url(path));
      await signedInPage.waitForLoadState("networkidle");
    }
    expect(errors).toEqual([]);
  });

  it("tells a visitor that Google sign-in is not set up on this gateway, not that a model's provider is missing", async () => {
    context = await browser.newContext();
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    await page.goto(url("/login"));
    await page.getByRole("link", { name: "Continue with Google" }).click();
    await page.waitForURL(/\/login\?error=provider_not_configured$/);
    await page.getByRole("alert").filter({ hasText: "Signing in with this provider is not set up on this gateway. Log in with your e-mail and password instead." }).waitFor();
    await expect(page.getByText(/model's provider/).count()).resolves.toBe(0);
  });

  it("creates one key, revokes once and opens one checkout when the button is double-clicked", async () => {
    const { page } = await signedIn();
    await page.goto(url("/dashboard/keys"));
    await page.getByText("No keys yet").waitFor();
    const creates = recordCalls(page, "keys.create");
    await page.getByLabel("Name").fill("double");
    await page.getByRole("button", { name: "Create key" }).dblclick();
    await page.getByTestId("new-key").waitFor();
    await page.waitForLoadState("networkidle");
    expect(creates).toHaveLength(1);
    const listed = (await (await page.request.get(url("/api/keys"))).json()) as { total: number };
    expect(listed.total).toBe(1);

    await page.getByRole("button", { name: /stored it safely/ }).click();
    const revokes = recordCalls(page, "keys.revoke");
    await page.getByRole("button", { name: "Revoke key double" }).click();
    await page.getByRole("button", { name: "Yes, revoke" }).dblclick();
    await page.getByText("No keys yet").waitFor();
    await page.waitForLoadState("networkidle");
    expect(revokes).toHaveLength(1);

    for (const button of ["Buy $10.00", "Subscribe to Pro"]) {
      await page.goto(url("/dashboard/billing"));
      await page.getByRole("button", { name: button }).waitFor();
      const checkouts = recordCalls(page, "billing.createCheckoutSession");
      await page.getByRole("button", { name: button }).dblclick();
      await page.getByRole("heading", { name: "Hosted checkout" }).waitFor();
      expect(checkouts).toHaveLength(1);
    }
  });

  it("wraps a long key name and a long e-mail instead of pushing the page or the Revoke button off screen", async () => {
    // Valid and unbroken by spaces or hyphens: a 64-character local part, and a key name of 100 word characters.
    const email = `${"a".repeat(50)}${Date.now()}@an-unusually-long-company-domain-name.example.com`.slice(-110);
    const keyName = `production_backend_worker_${"x".repeat(74)}`;
    const { page } = await signedIn(375, email);
    const overflow = () => page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    const insideViewport = async (name: string, width: number) => {
      const box = await page.getByRole("button", { name }).boundingBox();
      expect(box).not.toBeNull();
      expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(width);
    };

    await page.goto(url("/settings"));
    await page.getByRole("main").getByText(email).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);

    await page.goto(url("/dashboard/keys"));
    await page.getByLabel("Name").fill(keyName);
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByTestId("new-key").waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.getByRole("button", { name: /stored it safely/ }).click();
    await page.locator('td[data-label="Name"]', { hasText: keyName }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await insideViewport(`Revoke key ${keyName}`, 375);
    await page.getByRole("button", { name: `Revoke key ${keyName}` }).click();
    await insideViewport("Yes, revoke", 375);
    await page.getByRole("button", { name: "Cancel" }).click();

    await page.setViewportSize({ width: 1280, height: 900 });
    expect(await overflow()).toBeLessThanOrEqual(0);
    await insideViewport(`Revoke key ${keyName}`, 1280);
    await screenshot(page, "keys-long-name");
  });

  it("shows a request's cost in the one money format (cents; more digits only under a cent) in the playground and the overview", async () => {
    const { page, userId } = await signedIn();
    await credit(env.server, userId, 5);
    // The fake upstream counts words: 4000 in, 4001 out = 0.004 + 0.008002 dollars at textA-4's listed prices.
    await page.goto(url("/dashboard/playground"));
    await page.getByLabel("Model").selectOption("textA-4");
    await page.getByLabel("Message").fill("word ".repeat(4000).trim());
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByTestId("answer-usage").waitFor();
    expect(await page.getByTestId("answer-usage").textContent()).toBe("4,000 prompt + 4,001 completion tokens · $0.01");

    const usage = (await (await page.request.get(url("/api/usage?per_page=1"))).json()) as { data: Array<{ cost: number }> };
    expect(usage.data[0]?.cost).toBe(0.012002);
    await page.getByRole("link", { name: "Overview" }).click();
    const row = page.getByRole("table", { name: "Recent requests" }).locator("tbody tr").first();
    await expect(row.locator('td[data-label="Cost"]').textContent()).resolves.toBe("$0.01");
  });

  it("shows the balance and the 30-day total with cents, however many digits the API states", async () => {
    const { page, userId } = await signedIn();
    await credit(env.server, userId, 5);
    // 4000 words in and 4001 out cost 0.012002 dollars: 4.987998 left, shown as $4.99 (never $4.987998 beside $0.10)
    const res = await page.request.post(url("/v1/chat/completions"), { data: { model: "textA-4", messages: [{ role: "user", content: "word ".repeat(4000).trim() }] } });
    expect(res.status()).toBe(200);
    const credits = (await (await page.request.get(url("/api/billing/credits"))).json()) as { balance: number };
    expect(credits.balance).toBe(4.987998);
    await page.goto(url("/dashboard"));
    await expect(page.getByTestId("balance").textContent()).resolves.toBe("$4.99");
    await page.getByText("Total: $0.01").waitFor();
    await credit(env.server, userId, 0.5);
    await page.goto(url("/dashboard/billing"));
    await expect(page.getByTestId("billing-balance").textContent()).resolves.toBe("$5.49");
  });

  it("shows older payments on request when the history holds more than one page", async () => {
    const { page, userId } = await signedIn();
    // 55 entries, newest first: $0.55 down to $0.01
    for (let cents = 1; cents <= 55; cents++) await credit(env.server, userId, cents / 100);
    await page.goto(url("/dashboard/billing"));
    const rows = page.locator("table tbody tr");
    const more = page.getByRole("button", { name: "Show older payments" });
    await more.waitFor();
    await expect(rows.count()).resolves.toBe(50);
    await expect(rows.first().locator('td[data-label="Amount"]').textContent()).resolves.toBe("$0.55");
    await more.click();
    await expect.poll(() => rows.count()).toBe(55);
    await expect(rows.last().locator('td[data-label="Amount"]').textContent()).resolves.toBe("$0.01");
    await expect(more.count()).resolves.toBe(0);
  });

  it("drops a settings form's last answer once the user edits it again, so 'saved' never describes unsaved input", async () => {
    const { page } = await signedIn();
    await page.goto(url("/settings"));
    const name = page.getByRole("textbox", { name: "Name" });
    await name.fill("Renamed User");
    await name.press("Enter");
    await page.getByText("Profile saved.").waitFor();
    await name.fill("Renamed User again");
    await expect(page.getByText("Profile saved.").count()).resolves.toBe(0);

    await page.getByLabel("Current password").fill("Wrong-Password-11");
    await page.getByLabel("New password").fill("Another-Quartz-77");
    await page.getByLabel("New password").press("Enter");
    await page.getByText("Your current password is incorrect.").waitFor();
    await page.getByLabel("Current password").fill("Quartz-Lamp-9");
    await expect(page.getByText("Your current password is incorrect.").count()).resolves.toBe(0);
  });

  it("shows no earlier image and its cost beside a failed image generation", async () => {
    const { page, userId } = await signedIn();
    await credit(env.server, userId, 5);
    await page.goto(url("/dashboard/playground"));
    await page.getByLabel("Model").selectOption("imageA");
    await page.getByLabel("Prompt").fill("A lighthouse at dawn");
    await page.getByRole("button", { name: "Generate image" }).click();
    await page.getByText("1 image · $0.10").waitFor();
    env.upstreams.imageA.failStatus(5, 500);
    try {
      await page.getByRole("button", { name: "Generate image" }).click();
      await page.getByText("The model provider failed to answer. You were not charged; please try again.").waitFor();
    } finally {
      env.upstreams.imageA.clear();
    }
    await expect(page.getByText("1 image · $0.10").count()).resolves.toBe(0);
    await expect(page.getByRole("img", { name: /Generated image/ }).count()).resolves.toBe(0);
  });

  it("names a missing page in its heading and tab title, inside the dashboard and outside it", async () => {
    const { page } = await signedIn();
    await page.goto(url("/dashboard"));
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    for (const missing of ["/dashboard/nope", "/no-such-page"]) {
      await page.goto(url(missing));
      await page.getByRole("heading", { level: 1, name: "Page not found" }).waitFor();
      await expect(page.title()).resolves.toBe("Page not found · AI Gateway");
      await page.getByRole("link", { name: "Go to the dashboard" }).waitFor();
    }
  });

  it("ties a refused custom amount's reason to the field, so a screen reader reads it with the field", async () => {
    const { page } = await signedIn();
    await page.goto(url("/dashboard/billing"));
    const field = page.getByLabel("Custom amount (USD)");
    await field.fill("12.345");
    await page.getByRole("button", { name: "Buy credits" }).click();
    await expect(field.getAttribute("aria-invalid")).resolves.toBe("true");
    const reason = page.locator(`#${await field.getAttribute("aria-describedby")}`);
    await expect(reason.textContent()).resolves.toBe("Enter an amount in dollars, with at most two decimals.");
  });

  it("gives screen readers the 30-day chart's numbers as a table, per day and model", async () => {
    const { page, userId } = await signedIn();
    await credit(env.server, userId, 5);
    // The dashboard's session is accepted by the gateway; 4000 words in and 4001 out cost 0.012002 dollars.
    const res = await page.request.post(url("/v1/chat/completions"), { data: { model: "textA-4", messages: [{ role: "user", content: "word ".repeat(4000).trim() }] } });
    expect(res.status()).toBe(200);
    await page.goto(url("/dashboard"));
    // The chart is a picture (role img, its total only); the numbers behind its bars come as a table.
    await page.locator(".chart svg rect").first().waitFor();
    const table = page.getByRole("table", { name: "Spend per day" });
    await expect(table.getByRole("columnheader").allTextContents()).resolves.toEqual(["Day", "textA-4", "Total"]);
    const today = new Date().toISOString().slice(0, 10);
    await expect(table.getByRole("row", { name: new RegExp(`^${today}`) }).getByRole("cell").allTextContents()).resolves.toEqual(["$0.01", "$0.01"]);
    await page.getByRole("button", { name: "Requests" }).click();
    await expect(page.getByRole("table", { name: "Requests per day" }).getByRole("row", { name: new RegExp(`^${today}`) }).getByRole("cell").allTextContents()).resolves.toEqual(["1", "1"]);
  });

  it("keeps the overview within a phone's width when the chart shows several models", async () => {
    const { page, userId } = await signedIn(375);
    await credit(env.server, userId, 5);
    for (const model of ["textA-4", "textA-4-turbo", "textB-3-haiku"]) {
      const res = await page.request.post(url("/v1/chat/completions"), { data: { model, messages: [{ role: "user", content: "hello there" }] } });
      expect(res.status()).toBe(200);
    }
    await page.goto(url("/dashboard"));
    await page.locator(".chart svg rect").first().waitFor();
    // The screen-reader table of the chart has a column per model; it must not widen the page (it did by 169 px).
    await expect(page.getByRole("table", { name: "Spend per day" }).getByRole("columnheader").count()).resolves.toBe(5);
    expect(await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth")).toBeLessThanOrEqual(0);
  });

  /** A Pro subscription for 20 days from now, announced by its signed webhook event. */
  async function subscribedToPro(userId: string, tag: string) {
    const t = Math.floor(Date.now() / 1000);
    const end = t + 20 * 86_400;
    const sub = {
      id: `sub_${tag}_${Date.now()}`, object: "subscription", status: "active", customer: `cus_${tag}_${Date.now()}`,
      metadata: { user_id: userId, plan_id: "pro" }, cancel_at_period_end: false,
      current_period_start: t, current_period_end: end, items: { object: "list", data: [] },
    };
    expect((await deliver(env.server, stripeEvent("customer.subscription.created", sub, { created: t }))).status).toBe(200);
    return { sub, t, end };
  }

  it("says on the overview that a cancelled subscription ends, not that it renews", async () => {
    const { page, userId } = await signedIn();
    const { sub, t, end } = await subscribedToPro(userId, "overview");
    const day = new Date(end * 1000).toLocaleDateString("en-US", { year: "numeric", month: "short", day: "numeric" });
    await page.goto(url("/dashboard"));
    const plan = page.locator(".stat", { has: page.getByRole("heading", { name: "Plan" }) });
    await plan.getByText(`Renews ${day}`).waitFor();

    const cancelled = { ...sub, cancel_at_period_end: true };
    expect((await deliver(env.server, stripeEvent("customer.subscription.updated", cancelled, { created: t + 1 }))).status).toBe(200);
    await page.reload();
    await plan.getByText(`Cancelled, ends ${day}`).waitFor();
    await expect(plan.getByText(/Renews/).count()).resolves.toBe(0);
  });

  it("undoes a playground message that got no answer, so the retry sends no empty assistant turn", async () => {
    const { page, userId } = await signedIn();
    const sent: unknown[] = [];
    page.on("request", (req) => { if (req.url().endsWith("/v1/chat/completions")) sent.push(req.postDataJSON()); });
    await page.goto(url("/dashboard/playground"));
    await page.getByLabel("Model").selectOption("textB-3-haiku");
    await page.getByLabel("Message").fill("Say hello");
    await page.getByRole("button", { name: "Send" }).click();
    // No credits yet: 402. The message goes back to the composer, no empty answer stays in the conversation.
    await page.getByRole("alert").filter({ hasText: "Your balance is too low" }).waitFor();
    await expect(page.getByTestId("assistant-message").count()).resolves.toBe(0);
    await expect(page.getByLabel("Message").inputValue()).resolves.toBe("Say hello");

    await credit(env.server, userId, 5);
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByTestId("answer-usage").waitFor();
    await expect(page.getByTestId("assistant-message").count()).resolves.toBe(1);
    // Anthropic's Messages API refuses an empty turn ("all messages must have non-empty content"): none is sent.
    expect(sent).toHaveLength(2);
    expect((sent[1] as { messages: unknown[] }).messages).toEqual([{ role: "user", content: "Say hello" }]);
  });

  it("offers no other plan's checkout while subscribed, saying how to switch instead of a raw 409", async () => {
    const { page, userId } = await signedIn();
    const { sub, t, end } = await subscribedToPro(userId, "switch");
    // The API refuses a second subscription: the button offered it and showed the 409's text naming an API route.
    const refused = await page.request.post(url("/api/billing/create-checkout-session"), {
      data: { type: "subscription", plan_id: "team", success_url: url("/dashboard/billing"), cancel_url: url("/dashboard/billing") },
    });
    expect(refused.status()).toBe(409);
    await page.goto(url("/dashboard/billing"));
    await page.getByText("To switch, cancel your Pro plan first; this one is available once it has ended.").waitFor();
    await expect(page.getByRole("button", { name: /^Subscribe to/ }).count()).resolves.toBe(0);

    const day = new Date(end * 1000).toLocaleDateString("en-US", { year: "numeric", month: "short", day: "numeric" });
    expect((await deliver(env.server, stripeEvent("customer.subscription.updated", { ...sub, cancel_at_period_end: true }, { created: t + 1 }))).status).toBe(200);
    await page.reload();
    await page.getByText(`Available after your Pro plan ends on ${day}.`).waitFor();
    await expect(page.getByRole("button", { name: /^Subscribe to/ }).count()).resolves.toBe(0);
  });

  it("labels the chart's days as UTC days for a user far from UTC, whose local dates differ", async () => {
    // UTC+14: a request's local date is the day after its UTC day for 10 hours of every day.
    const { page, userId } = await signedIn(1280, undefined, "Pacific/Kiritimati");
    await credit(env.server, userId, 5);
    expect((await page.request.post(url("/v1/chat/completions"), { data: { model: "textA-4", messages: [{ role: "user", content: "hi" }] } })).status()).toBe(200);
    await page.goto(url("/dashboard"));
    await page.locator(".chart svg rect").first().waitFor();
    const today = new Date().toISOString().slice(0, 10);
    await page.getByText("· days in UTC").waitFor();
    await page.getByRole("table", { name: "Spend per day (UTC)" }).getByRole("row", { name: new RegExp(`^${today}`) }).waitFor();
    expect(await page.locator(".chart svg g title").last().textContent()).toMatch(new RegExp(`^${today} \\(UTC\\): `));
  });

  it("does not send a playground message on the Enter that confirms an input method's composition", async () => {
    const { page, userId } = await signedIn();
    await credit(env.server, userId, 5);
    const sent: string[] = [];
    page.on("request", (req) => { if (req.url().endsWith("/v1/chat/completions")) sent.push(req.url()); });
    await page.goto(url("/dashboard/playground"));
    const message = page.getByLabel("Message");
    await message.fill("こんにちは");
    // What Chromium dispatches when Enter picks a Japanese conversion: a keydown flagged isComposing (keyCode 229).
    // (Safari flags it by keyCode 229 only.) Evaluated as text: the server project has no DOM types.
    await page.evaluate(`for (const init of [{ isComposing: true, keyCode: 229 }, { isComposing: false, keyCode: 229 }]) {
      document.querySelector("textarea[name=message]").dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", code: "Enter", bubbles: true, cancelable: true, ...init }));
    }`);
    await page.waitForTimeout(500);
    expect(sent).toHaveLength(0);
    await expect(message.inputValue()).resolves.toBe("こんにちは");
    // A plain Enter afterwards sends it.
    await message.press("Enter");
    await page.getByTestId("answer-usage").waitFor();
    expect(sent).toHaveLength(1);
  });

  it("keeps keyboard focus in the key list after a revoke, on a confirmation a screen reader announces", async () => {
    const { page } = await signedIn();
    for (const name of ["first", "second"]) {
      expect((await page.request.post(url("/api/keys"), { data: { name } })).status()).toBe(201);
    }
    await page.goto(url("/dashboard/keys"));
    await page.getByRole("button", { name: "Revoke key first" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Yes, revoke" }).and(page.locator(":focus")).waitFor();
    await page.keyboard.press("Enter");
    const notice = page.getByRole("status").filter({ hasText: "Key “first” was revoked." });
    await notice.and(page.locator(":focus")).waitFor();
    await page.keyboard.press("Tab");
    // the next key's first action (Edit, then Rotate and Revoke)
    await page.getByRole("button", { name: "Edit controls of second" }).and(page.locator(":focus")).waitFor();
  });

  it("stacks the key form at phone width without a blank gap above Create key", async () => {
    const { page } = await signedIn(375);
    await page.goto(url("/dashboard/keys"));
    const description = await page.getByLabel(/Description/).boundingBox();
    const button = await page.getByRole("button", { name: "Create key" }).boundingBox();
    expect(description && button).toBeTruthy();
    const gap = (button?.y ?? 0) - ((description?.y ?? 0) + (description?.height ?? 0));
    expect(gap).toBeGreaterThanOrEqual(0);
    expect(gap).toBeLessThanOrEqual(24);
  });
});
