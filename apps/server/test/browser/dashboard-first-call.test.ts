import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, mailsTo, uniqueEmail } from "../auth-helpers";
import { credit } from "../support/gateway-fixtures";
import { SCREENSHOT_DIR, launchBrowser, screenshot, startDashboardServer, type DashboardServer } from "./browser-support";

/** The request a curl command line of the quick start makes: URL, -H headers and the -d body. */
function parseCurl(command: string): { url: string; headers: Record<string, string>; body: string } {
  const url = /^curl (\S+)/.exec(command)?.[1];
  const body = /-d '(.*)'\s*$/m.exec(command)?.[1];
  const headers: Record<string, string> = {};
  for (const [, name = "", value = ""] of command.matchAll(/-H "([^:]+): ([^"]*)"/g)) headers[name] = value;
  if (!url || body === undefined) throw new Error(`not a curl call: ${command}`);
  return { url, headers, body };
}

// A new user gets from sign-up to a first successful call with only what the dashboard shows, then finds that call
// on the usage page and narrows what the key may do. Each step depends on the previous one.
describe("dashboard: from sign-up to a first call, usage and key controls", () => {
  let env: DashboardServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const email = uniqueEmail("first-call");
  let userId = "";
  let secret = "";
  let requestId = "";
  let nodeSnippet = "";

  beforeAll(async () => {
    [env, browser] = await Promise.all([startDashboardServer(), launchBrowser()]);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: env.baseUrl });
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

  it("signs up, follows the mailed link and logs in", async () => {
    await page.goto(url("/signup"));
    await page.getByLabel("Name").fill("First Caller");
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "Check your e-mail" }).waitFor();
    const link = mailsTo(env.server, email).map((m) => /https?:\/\/\S+\/verify-email\?token=[\w-]+/.exec(m.text)?.[0]).find(Boolean);
    expect(link?.startsWith(env.baseUrl)).toBe(true);
    await page.goto(link ?? "");
    await page.getByText("Your e-mail address is verified").waitFor();
    await page.goto(url("/login"));
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/dashboard$/);
    const me = (await (await page.request.get(url("/api/auth/me"))).json()) as { user: { id: string } };
    userId = me.user.id;
  });

  it("the overview's quick start says what comes next: no credits yet, no key yet", async () => {
    const card = page.getByRole("region", { name: "Quick start" });
    await card.getByText("You have no credits yet").waitFor();
    await card.getByRole("link", { name: "Buy credits or redeem a code" }).waitFor();
    await card.getByText("No API key yet").waitFor();
    await screenshot(page, "first-call-overview-empty");
    // The credits a new user buys or redeems; the operator's development credit stands in for the payment here.
    await credit(env.server, userId, 5);
    await card.getByRole("link", { name: "Create your first API key" }).click();
    await page.waitForURL(/\/dashboard\/keys$/);
  });

  it("creates a key and gets a quick start with the full key, the base URL and copy buttons", async () => {
    await page.getByLabel("Name").fill("first");
    await page.getByRole("button", { name: "Create key" }).click();
    secret = (await page.getByTestId("new-key").textContent()) ?? "";
    expect(secret).toMatch(/^ak-live-[A-Za-z0-9]{32,}$/);
    const card = page.getByRole("region", { name: "Quick start" });
    await expect(card.getByTestId("base-url").textContent()).resolves.toBe(`${env.baseUrl}/v1`);
    await card.getByRole("button", { name: "Copy base URL" }).click();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(`${env.baseUrl}/v1`);
    for (const [language, sdkLine] of [["Python", `api_key="${secret}"`], ["Node.js", `apiKey: "${secret}"`]] as const) {
      await card.getByRole("button", { name: language, exact: true }).click();
      await expect(card.getByTestId("snippet").textContent()).resolves.toContain(sdkLine);
    }
    nodeSnippet = (await card.getByTestId("snippet").textContent()) ?? "";
    await card.getByRole("button", { name: "curl", exact: true }).click();
    await card.getByRole("button", { name: "Copy curl snippet" }).click();
    const curl = (await page.evaluate("navigator.clipboard.readText()")) as string;
    await expect(card.getByTestId("snippet").textContent()).resolves.toBe(curl);
    await screenshot(page, "first-call-key-created");

    // The copied command, run as curl would run it.
    const call = parseCurl(curl);
    expect(call.url).toBe(`${env.baseUrl}/v1/chat/completions`);
    expect(call.headers.Authorization).toBe(`Bearer ${secret}`);
    const res = await fetch(call.url, { method: "POST", headers: call.headers, body: call.body });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { object: string; choices: Array<{ message: { content: string } }> };
    expect(answer.object).toBe("chat.completion");
    expect(answer.choices[0]?.message.content.length).toBeGreaterThan(0);
    requestId = res.headers.get("x-request-id") ?? "";
    expect(requestId).not.toBe("");
    await page.getByRole("button", { name: /stored it safely/ }).click();
  });

  it("shows the key's prefix in the overview's quick start once the secret is gone", async () => {
    await page.getByRole("link", { name: "Overview" }).click();
    const card = page.getByRole("region", { name: "Quick start" });
    await expect(card.getByTestId("snippet").textContent()).resolves.toContain(`Bearer ${secret.slice(0, 12)}…"`);
    await expect(card.getByText(secret).count()).resolves.toBe(0);
    await expect(card.getByText("You have no credits yet").count()).resolves.toBe(0);
  });

  it("shows the call on the usage page by model and by key, finds it by request id, exports CSV", async () => {
    await page.getByRole("link", { name: "Usage", exact: true }).click();
    await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
    await expect(page.getByTestId("usage-requests").textContent()).resolves.toBe("1");
    const byModel = page.getByRole("table", { name: "Usage by model" });
    await expect(byModel.locator("tbody tr").first().locator("td").allTextContents()).resolves.toEqual(["textA-4", "1", expect.stringMatching(/^\$\d/)]);
    const byKey = page.getByRole("table", { name: "Usage by key" });
    await expect(byKey.locator("tbody tr").first().locator("td").first().textContent()).resolves.toBe(`first (${secret.slice(0, 12)}…)`);
    const log = page.getByRole("table", { name: "Request log" });
    await log.locator(`tr[data-request-id="${requestId}"]`).waitFor();
    await screenshot(page, "usage");

    await page.getByLabel("Request id").fill(requestId);
    await page.getByRole("button", { name: "Search" }).click();
    await log.getByText(requestId).waitFor();
    await expect(log.locator("tbody tr").count()).resolves.toBe(1);
    await page.getByLabel("Request id").fill("req_no_such_request");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("No request with id req_no_such_request in this range.").waitFor();
    await page.getByRole("button", { name: "Show all" }).click();

    // The CSV export asks for the same range and filters.
    const href = (await page.getByTestId("csv-export").getAttribute("href")) ?? "";
    expect(href).toMatch(/^\/api\/usage\?from=\d{4}-\d{2}-\d{2}&to=\d{4}-\d{2}-\d{2}&format=csv$/);
    const csv = await page.request.get(url(href));
    expect(csv.status()).toBe(200);
    expect(csv.headers()["content-type"]).toMatch(/^text\/csv/);
    expect((await csv.text()).trim().split("\n")).toHaveLength(2);

    // Filtered to the key: the same call, and the export carries the filter.
    const me = (await (await page.request.get(url("/api/keys"))).json()) as { keys: Array<{ id: string }> };
    const keyId = me.keys[0]?.id ?? "";
    await page.getByLabel("Key", { exact: true }).selectOption(keyId);
    await expect.poll(() => page.getByTestId("csv-export").getAttribute("href")).toContain(`key_id=${keyId}`);
    await expect(page.getByTestId("usage-requests").textContent()).resolves.toBe("1");

  });

  it("runs the Node.js snippet as shown, with the official openai package", async () => {
    // inside the repository, so that `import OpenAI from "openai"` resolves as in a project that installed it
    const file = path.join(SCREENSHOT_DIR, "..", "quick-start-snippet.mjs");
    writeFileSync(file, nodeSnippet);
    const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 20_000 });
    expect(stdout.trim().length).toBeGreaterThan(0);
  });

  it("edits the key's controls, refuses what the plan does not allow, and shows them in the list", async () => {
    await page.goto(url("/dashboard/keys"));
    const row = page.locator("tr", { hasText: "first" });
    await expect(row.getByTestId("key-controls-summary").textContent()).resolves.toBe("None");
    await row.getByRole("button", { name: "Edit controls of first" }).click();
    const form = page.getByRole("form", { name: "Controls of first" });
    await form.getByLabel("Limit (USD)").fill("2.5");
    await form.getByLabel("Applies", { exact: true }).selectOption("monthly");
    await form.getByRole("checkbox", { name: "textA-4", exact: true }).check();
    await form.getByLabel("Requests per minute").fill("100000");
    await form.getByLabel("Concurrent requests").fill("1");
    await form.getByLabel(/^Allowed IPs/).fill("127.0.0.1\n::1");
    await form.getByLabel(/^Expires/).fill("2031-01-01T12:00");
    await form.getByRole("button", { name: "Save controls" }).click();
    // the plan's 20 requests per minute is the most a key may have: the server says so, nothing is saved
    await form.getByRole("alert").filter({ hasText: "requests_per_minute" }).waitFor();
    const keyId = (await row.getAttribute("data-key-id")) ?? "";
    const unchanged = (await (await page.request.get(url(`/api/keys/${keyId}`))).json()) as { limit: number | null };
    expect(unchanged.limit).toBeNull();

    await form.getByLabel("Requests per minute").fill("5");
    await form.getByRole("button", { name: "Save controls" }).click();
    await form.getByText("Controls saved.").waitFor();
    const saved = (await (await page.request.get(url(`/api/keys/${keyId}`))).json()) as Record<string, unknown>;
    expect(saved).toMatchObject({
      limit: 2.5, limit_reset: "monthly", allowed_models: ["textA-4"], rate_limit: { requests_per_minute: 5, concurrent_requests: 1 },
      allowed_ips: ["127.0.0.1", "::1"], expires_at: new Date("2031-01-01T12:00").toISOString(),
    });
    await expect(row.getByTestId("key-controls-summary").textContent()).resolves.toBe("model textA-4 · 5/min, 1 at once · 2 IP ranges · expires Jan 1, 2031");
    await expect(row.locator('td[data-label="Spend"]').textContent()).resolves.toMatch(/^\$[\d.]+ of \$2\.50 per month/);
    await screenshot(page, "keys-controls");

    // a model the key may not call is refused, the allowed one still answers
    const call = (model: string, key = secret) => fetch(`${env.baseUrl}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    });
    expect((await call("textA-4")).status).toBe(200);
    const refused = await call("textB-3-haiku");
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("model_not_allowed");

    await form.getByRole("button", { name: "Close" }).click();
    await expect(page.getByRole("form", { name: "Controls of first" }).count()).resolves.toBe(0);
  });

  it("rotates the key with a grace period: the new secret is shown once and both work meanwhile", async () => {
    const row = page.locator("tr", { hasText: "first" });
    await row.getByRole("button", { name: "Rotate key first" }).click();
    await row.getByLabel("New secret; the old one:", { exact: true }).selectOption("3600");
    await row.getByRole("button", { name: "Rotate now" }).click();
    const shown = page.getByTestId("new-key");
    await shown.waitFor();
    const rotated = (await shown.textContent()) ?? "";
    expect(rotated).toMatch(/^ak-live-[A-Za-z0-9]{32,}$/);
    expect(rotated).not.toBe(secret);
    await page.getByText("The old secret keeps working for 1 hour").waitFor();
    await expect(page.getByRole("region", { name: "Quick start" }).getByTestId("snippet").textContent()).resolves.toContain(rotated);
    await screenshot(page, "keys-rotated");
    for (const key of [secret, rotated]) {
      const res = await fetch(`${env.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
    }
    await page.getByRole("button", { name: /stored it safely/ }).click();
    await expect(shown.count()).resolves.toBe(0);
    secret = rotated;
  });

  it("is legible at phone width", async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(url("/dashboard/usage"));
    await page.getByRole("table", { name: "Request log" }).waitFor();
    expect(await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth")).toBeLessThanOrEqual(0);
    await screenshot(page, "usage-phone");
    await page.goto(url("/dashboard"));
    await page.getByRole("region", { name: "Quick start" }).waitFor();
    expect(await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth")).toBeLessThanOrEqual(0);
    await screenshot(page, "overview-phone");
    await page.goto(url("/dashboard/keys"));
    await page.getByRole("button", { name: "Edit controls of first" }).click();
    await page.getByRole("form", { name: "Controls of first" }).waitFor();
    expect(await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth")).toBeLessThanOrEqual(0);
    await screenshot(page, "keys-phone");
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
