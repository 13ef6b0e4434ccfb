// The dashboard's Admin section in a real browser: an admin finds a customer, credits them and suspends them; a
// customer sees no Admin section. Every step is checked against the API too.
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, login, PASSWORD, uniqueEmail, verifiedUser } from "../auth-helpers";
import { launchBrowser, screenshot, startDashboardServer, type DashboardServer } from "./browser-support";

describe("the Admin section in a real browser", () => {
  let env: DashboardServer;
  let browser: Browser;
  let page: Page;
  const adminEmail = uniqueEmail("browser-admin");
  let customer: { email: string; cookie: string; id: string };

  beforeAll(async () => {
    [env, browser] = await Promise.all([startDashboardServer({ ADMIN_EMAILS: adminEmail }), launchBrowser()]);
    await verifiedUser(env.server, adminEmail);
    customer = await verifiedUser(env.server, uniqueEmail("browser-customer"));
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
  }, 120_000);

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === "fail" && page) await screenshot(page, `failed-${ctx.task.name.replace(/\W+/g, "-")}`);
  });

  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  const url = (p: string) => `${env.baseUrl}${p}`;

  async function logIn(email: string): Promise<void> {
    await page.goto(url("/login"));
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/dashboard$/);
  }

  it("a customer sees no Admin section, and the page itself says it is for admins", async () => {
    const context = await browser.newContext();
    const other = await context.newPage();
    await other.goto(url("/login"));
    await other.getByLabel("E-mail").fill(customer.email);
    await other.getByLabel("Password").fill(PASSWORD);
    await other.getByRole("button", { name: "Log in" }).click();
    await other.waitForURL(/\/dashboard$/);
    await other.getByRole("link", { name: "Billing" }).waitFor();
    expect(await other.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Admin" }).count()).toBe(0);
    await other.goto(url("/dashboard/admin"));
    await other.getByText("This section is for the gateway's admins only.").waitFor();
    await context.close();
  });

  it("lists users, searches, credits a user and suspends them", async () => {
    await logIn(adminEmail);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Admin" }).click();
    await page.waitForURL(/\/dashboard\/admin$/);
    await page.getByTestId("admin-users").getByRole("link", { name: customer.email }).waitFor();
    await page.getByLabel("E-mail or name").fill(customer.email);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByTestId("admin-users").getByRole("link", { name: customer.email }).click();
    await page.waitForURL(/\/dashboard\/admin\/users\//);
    await page.getByRole("heading", { name: customer.email }).waitFor();
    await screenshot(page, "admin-user");

    await page.getByLabel("Amount (USD, negative takes back)").fill("7.50");
    await page.getByLabel("Reason").fill("browser credit");
    await page.getByRole("button", { name: "Adjust credits" }).click();
    await page.getByText("Done: the balance is now $7.50.").waitFor();
    await page.getByTestId("admin-user-balance").filter({ hasText: "$7.50" }).waitFor();
    await page.getByTestId("admin-ledger").getByText("Adjustment").waitFor();
    expect((await call(env.server, "GET", "/api/billing/credits", { cookie: customer.cookie })).body.balance).toBe(7.5);

    // a debit past the balance is refused, naming it
    await page.getByLabel("Amount (USD, negative takes back)").fill("-100");
    await page.getByLabel("Reason").fill("too much");
    await page.getByRole("button", { name: "Adjust credits" }).click();
    await page.getByRole("alert").filter({ hasText: "$7.50" }).waitFor();

    await page.getByRole("button", { name: "Suspend" }).click();
    await page.getByRole("button", { name: "Yes, suspend" }).click();
    await page.getByTestId("admin-user-status").filter({ hasText: "suspended" }).waitFor();
    await page.getByRole("button", { name: "Unsuspend" }).waitFor();
    const login = await call(env.server, "POST", "/api/auth/login", { body: { email: customer.email, password: PASSWORD } });
    expect(login.status).toBe(403);
    expect(login.body.error.code).toBe("account_suspended");
    await screenshot(page, "admin-user-suspended");
  });

  it("creates a redemption code and shows the audit log", async () => {
    await page.getByRole("navigation", { name: "Admin" }).getByRole("link", { name: "Redemption codes" }).click();
    await page.getByLabel("Amount (USD)").fill("3");
    await page.getByLabel("Max redemptions").fill("2");
    await page.getByRole("button", { name: "Create code" }).click();
    const code = (await page.getByTestId("created-code").textContent()) ?? "";
    expect(code).toMatch(/^[A-Za-z0-9]{16}$/);
    await page.getByRole("cell", { name: code }).waitFor();

    await page.getByRole("navigation", { name: "Admin" }).getByRole("link", { name: "Audit log" }).click();
    const audit = page.getByTestId("admin-audit");
    for (const action of ["redemption_code.create", "user.suspend", "user.credit"]) await audit.getByText(action, { exact: true }).waitFor();
    await screenshot(page, "admin-audit");
  });

  it("edits a model on the Models page: a bad deployments list shows the server's refusal, a new price is saved", async () => {
    await page.getByRole("navigation", { name: "Admin" }).getByRole("link", { name: "Models" }).click();
    const row = page.getByTestId("admin-models").getByRole("row").filter({ has: page.getByRole("cell", { name: "textC-8x22b", exact: true }) });
    await row.getByRole("button", { name: "Edit" }).click();
    const form = page.getByRole("form", { name: "Edit textC-8x22b" });
    await form.getByLabel("Deployments").fill('[{"id": "a", "baseUrl": "not a url"}]');
    await form.getByRole("button", { name: "Save" }).click();
    await form.getByRole("alert").filter({ hasText: "deployments[0].baseUrl" }).waitFor();
    await form.getByLabel("Deployments").fill("");
    await form.getByLabel("Input per 1K tokens").fill("4321");
    await form.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved textC-8x22b.").waitFor();
    await row.getByText("inputPer1k 4,321").waitFor();
    const model = await call(env.server, "GET", "/api/admin/models/textC-8x22b", { cookie: await login(env.server, adminEmail) });
    expect(model.body.model.pricing.inputPer1k).toBe(4321);
    await screenshot(page, "admin-models");
  });
});
