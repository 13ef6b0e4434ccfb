// CONTRACT 11: GET/PUT /api/billing/settings, the setup-mode checkout, low-balance e-mails, auto top-up, receipts.
// Real HTTP against two instances sharing one database, a fake Stripe that records every request, fake upstreams.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_PLANS } from "@gw/config";
import { randomBase62 } from "@gw/shared";
import { startFakeStripe, type FakeStripe, startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { call, mailsTo, RELAXED_LIMITS, verifiedUser } from "./auth-helpers";
import { deliver, expectLedgerConsistent, stripeEvent } from "./billing-support";
import { startTestServer, type TestServer } from "./harness";
import { credit, postJson } from "./support/gateway-fixtures";

interface Account { email: string; cookie: string; id: string; key: string }

describe("billing settings, low-balance e-mails and auto top-up", () => {
  let fake: FakeStripe;
  let fakes: FakeUpstreams;
  let a: TestServer;
  let b: TestServer;
  const users: string[] = [];

  beforeAll(async () => {
    [fake, fakes] = await Promise.all([startFakeStripe(), startFakeUpstreams()]);
    const databaseName = `t_${randomBase62(12)}`;
    const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 1000, concurrentRequests: 100 } : p));
    const env = { ...RELAXED_LIMITS, ...fakes.env, STRIPE_API_BASE: fake.url };
    a = await startTestServer({ env, databaseName, config: { plans } });
    b = await startTestServer({ env, databaseName, config: { plans } });
  });
  afterAll(async () => {
    if (a) await expectLedgerConsistent(a, users);
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([fake?.close(), fakes?.close()]);
  });

  async function account(dollars: number): Promise<Account> {
    const user = await verifiedUser(a);
    users.push(user.id);
    const created = await a.app.context.apiKeys.create(user.id, { name: "test" });
    if (dollars > 0) await credit(a, user.id, dollars);
    return { ...user, key: created.key };
  }

  /** One image request: 0.10 USD. */
  async function charge(server: TestServer, user: Account): Promise<void> {
    const res = await postJson(server, "/api/v1/imageA/generate", user.key, { prompt: "a kite" });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }

  const settings = (user: Account, body?: unknown) =>
    call(a, body === undefined ? "GET" : "PUT", "/api/billing/settings", { cookie: user.cookie, body });

  const setupSession = (user: Account) =>
    call(a, "POST", "/api/billing/create-setup-session", { cookie: user.cookie, body: { success_url: "https://example.com/ok", cancel_url: "https://example.com/no" } });

  /** Saves `paymentMethod` as the user's card: a setup checkout, then a signed setup_intent.succeeded. */
  async function saveCard(user: Account, paymentMethod: string): Promise<void> {
    const setup = await setupSession(user);
    expect(setup.status).toBe(200);
    const { customer } = fake.objects.get(setup.body.session_id as string) as { customer: string };
    const res = await deliver(a, stripeEvent("setup_intent.succeeded", { id: `seti_${randomBase62(10)}`, object: "setup_intent", customer, payment_method: paymentMethod, status: "succeeded" }));
    expect(res.status).toBe(200);
  }

  const offSessionIntents = (user: Account) =>
    fake.requests.filter((r) => r.method === "POST" && r.path === "/v1/payment_intents" && r.body.off_session === "true" && (r.body.metadata as Record<string, string> | undefined)?.user_id === user.id);

  const allMails = (user: Account) => [...mailsTo(a, user.email), ...mailsTo(b, user.email)];

  it("GET shows the defaults; PUT validates each field (400 naming it), keeps the fields left out, and needs a session", async () => {
    const user = await account(0);
    const initial = await settings(user);
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({ low_balance_threshold: null, auto_topup: { enabled: false, threshold: 5, amount: 20 }, has_saved_card: false });

    for (const [body, field] of [
      [{ low_balance_threshold: -1 }, "low_balance_threshold"],
      [{ low_balance_threshold: "5" }, "low_balance_threshold"],
      [{ low_balance_threshold: 1.234 }, "low_balance_threshold"],
      [{ auto_topup: { amount: 0.5 } }, "amount"],
      [{ auto_topup: { amount: 10_001 } }, "amount"],
      [{ auto_topup: { amount: 10.001 } }, "amount"],
      [{ auto_topup: { threshold: -2 } }, "threshold"],
      [{ auto_topup: { enabled: "yes" } }, "enabled"],
    ] as const) {
      const res = await settings(user, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.type).toBe("invalid_request_error");
      expect(res.body.error.message).toContain(field);
    }

    const saved = await settings(user, { low_balance_threshold: 2.5, auto_topup: { threshold: 3, amount: 50 } });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ low_balance_threshold: 2.5, auto_topup: { enabled: false, threshold: 3, amount: 50 }, has_saved_card: false });
    expect((await settings(user, { low_balance_threshold: null })).body.auto_topup).toEqual({ enabled: false, threshold: 3, amount: 50 });
    expect((await settings(user)).body.low_balance_threshold).toBeNull();

    expect((await call(a, "GET", "/api/billing/settings")).status).toBe(401);
  });

  it("enabling auto top-up without a saved card is 409 conflict; a setup checkout whose completion is signed saves the card as the default", async () => {
    const user = await account(0);
    const refused = await settings(user, { auto_topup: { enabled: true, threshold: 1, amount: 10 } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("conflict");
    expect((await settings(user)).body.auto_topup.enabled).toBe(false);

    const badOrigin = await call(a, "POST", "/api/billing/create-setup-session", { cookie: user.cookie, body: { success_url: "https://evil.test/ok", cancel_url: "https://example.com/no" } });
    expect(badOrigin.status).toBe(400);
    expect(badOrigin.body.error.message).toContain("success_url");

    const setup = await setupSession(user);
    expect(setup.status).toBe(200);
    expect(setup.body.session_id).toMatch(/^cs_/);
    expect(setup.body.url).toMatch(/^https:\/\//);
    const session = fake.objects.get(setup.body.session_id as string) as Record<string, unknown>;
    expect(session.mode).toBe("setup");
    expect(session.success_url).toBe("https://example.com/ok");

    const setupIntent = `seti_${randomBase62(10)}`;
    fake.objects.set(setupIntent, { id: setupIntent, object: "setup_intent", customer: session.customer, payment_method: "pm_card_visa", status: "succeeded" });
    const completed = stripeEvent("checkout.session.completed", { ...session, status: "complete", setup_intent: setupIntent });
    expect((await deliver(a, completed)).status).toBe(200);
    const customer = fake.objects.get(session.customer as string) as { invoice_settings: { default_payment_method: string } };
    expect(customer.invoice_settings.default_payment_method).toBe("pm_card_visa");
    expect((await settings(user)).body.has_saved_card).toBe(true);

    const enabled = await settings(user, { auto_topup: { enabled: true, threshold: 1, amount: 10 } });
    expect(enabled.status).toBe(200);
    expect(enabled.body.auto_topup).toEqual({ enabled: true, threshold: 1, amount: 10 });
  });

  it("one low-balance e-mail per crossing, whichever instance charged, and another only after the balance went back above", async () => {
    const user = await account(1);
    expect((await settings(user, { low_balance_threshold: 0.75 })).status).toBe(200);
    const lowMails = () => allMails(user).filter((m) => m.subject === "Your credit balance is low");
    await charge(a, user);
    await charge(b, user);
    expect(lowMails()).toHaveLength(0);
    // 0.80 -> 0.40: concurrent charges on both instances cross once
    await Promise.all([charge(a, user), charge(b, user), charge(a, user), charge(b, user)]);
    await vi.waitFor(() => expect(lowMails()).toHaveLength(1), { timeout: 15_000 });
    expect(lowMails()[0]?.text).toContain("0.75 USD");

    // 0.40 -> 0.90: back above; 0.90 -> 0.60: below again, a second e-mail
    await credit(a, user.id, 0.5);
    await charge(b, user);
    await Promise.all([charge(a, user), charge(b, user), charge(a, user)]);
    await vi.waitFor(() => expect(lowMails()).toHaveLength(2), { timeout: 15_000 });
    await Promise.all([a.app.context.ledger.flush(), b.app.context.ledger.flush()]);
    await charge(a, user);
    await a.app.context.ledger.flush();
    expect(lowMails()).toHaveLength(2);
  });

  it("auto top-up: concurrent charges below the threshold on two instances make one off-session payment; its webhook credits once with a receipt", async () => {
    const user = await account(1);
    await saveCard(user, "pm_card_visa");
    expect((await settings(user, { auto_topup: { enabled: true, threshold: 0.75, amount: 10 } })).status).toBe(200);
    await Promise.all([charge(a, user), charge(b, user), charge(a, user), charge(b, user)]);
    await vi.waitFor(() => expect(offSessionIntents(user)).toHaveLength(1), { timeout: 15_000 });
    // more charges while it is in flight: no second payment
    await Promise.all([charge(a, user), charge(b, user)]);
    await Promise.all([a.app.context.ledger.flush(), b.app.context.ledger.flush()]);

    const [request] = offSessionIntents(user);
    expect(request?.body).toMatchObject({ amount: "1000", currency: "usd", confirm: "true", off_session: "true", payment_method: "pm_card_visa" });
    expect(request?.body.customer).toMatch(/^cus_/);
    expect(request?.idempotencyKey).toMatch(/^topup:/);
    const metadata = request?.body.metadata as Record<string, string>;
    expect(metadata).toMatchObject({ kind: "credits", user_id: user.id, credits_micros: "10000000" });

    const intentId = [...fake.objects.values()].find((o) => o.object === "payment_intent" && (o.metadata as Record<string, string>).purchase_id === metadata.purchase_id)?.id as string;
    const receipt = `https://pay.stripe.com/receipts/${randomBase62(12)}`;
    const intent = { ...fake.objects.get(intentId), latest_charge: { id: "ch_1", object: "charge", receipt_url: receipt } };
    const before = await a.app.context.ledger.balance(user.id);
    const event = stripeEvent("payment_intent.succeeded", intent);
    expect((await deliver(a, event)).status).toBe(200);
    expect((await deliver(b, stripeEvent("payment_intent.succeeded", intent))).status).toBe(200);
    // 10 USD, plus the 10 USD package's bonus, once
    const bonus = a.config.creditPackages.find((p) => p.amount === 10)?.bonus ?? 0;
    expect(await a.app.context.ledger.balance(user.id)).toBe(before + (10 + bonus) * 1_000_000);

    const history = await call(a, "GET", "/api/billing/history", { cookie: user.cookie });
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    const purchase = history.body.entries.find((e: { type: string }) => e.type === "purchase");
    expect(purchase).toMatchObject({ amount: 10, receipt_url: receipt });
    expect(offSessionIntents(user)).toHaveLength(1);
  });

  it("an accepted top-up whose payment fails later (payment_intent.payment_failed) is e-mailed, and the next charge below the threshold tries again", async () => {
    const user = await account(1);
    await saveCard(user, "pm_card_visa");
    expect((await settings(user, { auto_topup: { enabled: true, threshold: 0.95, amount: 5 } })).status).toBe(200);
    await charge(a, user);
    await vi.waitFor(() => expect(offSessionIntents(user)).toHaveLength(1), { timeout: 15_000 });
    const intentId = [...fake.objects.values()].find((o) => o.object === "payment_intent" && (o.metadata as Record<string, string>).user_id === user.id)?.id as string;
    const failed = stripeEvent("payment_intent.payment_failed", { ...fake.objects.get(intentId), status: "requires_payment_method" });
    expect((await deliver(a, failed)).status).toBe(200);
    expect((await deliver(b, stripeEvent("payment_intent.payment_failed", { ...fake.objects.get(intentId), status: "requires_payment_method" }))).status).toBe(200);
    const failures = allMails(user).filter((m) => m.subject.startsWith("Auto top-up failed"));
    expect(failures.map((m) => m.subject)).toEqual(["Auto top-up failed"]);
    await charge(b, user);
    await vi.waitFor(() => expect(offSessionIntents(user)).toHaveLength(2), { timeout: 15_000 });
  });

  it("a purchase paid with setup_future_usage saves its card; charge.succeeded gives the purchase its receipt_url", async () => {
    const user = await account(0);
    const created = await call(a, "POST", "/api/billing/create-payment-intent", { cookie: user.cookie, body: { amount: 12 } });
    expect(created.status).toBe(200);
    const intent = { ...(fake.objects.get(created.body.payment_intent_id as string) as { id: string; customer: string }), status: "succeeded", amount_received: 1200, setup_future_usage: "off_session", payment_method: "pm_card_visa" };
    expect((await deliver(a, stripeEvent("payment_intent.succeeded", intent))).status).toBe(200);
    expect((await settings(user)).body.has_saved_card).toBe(true);
    const customer = fake.objects.get(intent.customer) as { invoice_settings: { default_payment_method: string } };
    expect(customer.invoice_settings.default_payment_method).toBe("pm_card_visa");

    const receipt = `https://pay.stripe.com/receipts/${randomBase62(12)}`;
    const charged = stripeEvent("charge.succeeded", { id: `ch_${randomBase62(10)}`, object: "charge", payment_intent: intent.id, receipt_url: receipt, amount: 1200, currency: "usd" });
    expect((await deliver(b, charged)).status).toBe(200);
    const history = await call(a, "GET", "/api/billing/history", { cookie: user.cookie });
    expect(history.body.entries.find((e: { type: string }) => e.type === "purchase")).toMatchObject({ amount: 12, balance_after: 12, receipt_url: receipt });
    // entries other than purchases carry none
    expect(history.body.entries.filter((e: { receipt_url?: string }) => e.receipt_url)).toHaveLength(1);
  });

  it("a failed top-up is e-mailed and tried again on the next charge; three failures in a row turn auto top-up off", async () => {
    const user = await account(1);
    await saveCard(user, "pm_card_chargeDeclined");
    expect((await settings(user, { auto_topup: { enabled: true, threshold: 0.95, amount: 20 } })).status).toBe(200);
    const failures = () => allMails(user).filter((m) => m.subject.startsWith("Auto top-up failed"));
    for (let attempt = 1; attempt <= 3; attempt++) {
      await charge(attempt % 2 ? a : b, user);
      await vi.waitFor(() => expect(failures()).toHaveLength(attempt), { timeout: 15_000 });
    }
    // (the outbox's order within one clock tick is not the sending order)
    expect(failures().map((m) => m.subject).sort()).toEqual(["Auto top-up failed", "Auto top-up failed", "Auto top-up failed and is turned off"]);
    expect(failures().find((m) => m.subject.endsWith("turned off"))?.text).toContain("three times in a row");
    expect(offSessionIntents(user)).toHaveLength(3);
    expect((await settings(user)).body.auto_topup.enabled).toBe(false);
    // Stripe also announces a decline with payment_intent.payment_failed: the failure is not counted twice
    const declined = offSessionIntents(user)[0]?.body.metadata as Record<string, string>;
    const failedEvent = stripeEvent("payment_intent.payment_failed", { id: `pi_${randomBase62(10)}`, object: "payment_intent", amount: 2000, currency: "usd", status: "requires_payment_method", metadata: declined });
    expect((await deliver(a, failedEvent)).status).toBe(200);
    expect(failures()).toHaveLength(3);
    // off: no more attempts
    await charge(a, user);
    await a.app.context.ledger.flush();
    expect(offSessionIntents(user)).toHaveLength(3);
  });
});

describe("the setup checkout and the off-session payment against stripe-mock (the wire format Stripe accepts)", () => {
  let server: TestServer;
  let upstreams: FakeUpstreams;
  beforeAll(async () => {
    upstreams = await startFakeUpstreams();
    server = await startTestServer({ env: { ...RELAXED_LIMITS, ...upstreams.env } });
  });
  afterAll(async () => {
    await server?.close();
    await upstreams?.close();
  });

  it("POST /api/billing/create-setup-session answers {session_id, url}; a charge.succeeded receipt of an unknown payment changes nothing", async () => {
    const user = await verifiedUser(server);
    const res = await call(server, "POST", "/api/billing/create-setup-session", { cookie: user.cookie, body: { success_url: "https://example.com/ok", cancel_url: "https://example.com/no" } });
    expect(res.status).toBe(200);
    expect(typeof res.body.session_id).toBe("string");
    expect(typeof res.body.url).toBe("string");
    const missing = await call(server, "POST", "/api/billing/create-setup-session", { cookie: user.cookie, body: { success_url: "https://example.com/ok" } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("cancel_url");
    const receipt = stripeEvent("charge.succeeded", { id: "ch_unknown", object: "charge", payment_intent: "pi_unknown", receipt_url: "https://pay.stripe.com/receipts/x" });
    expect((await deliver(server, receipt)).status).toBe(200);
  });

  it("an auto top-up's off-session PaymentIntent is accepted by stripe-mock: no failure e-mailed, auto top-up stays on", async () => {
    const user = await verifiedUser(server);
    const setup = await call(server, "POST", "/api/billing/create-setup-session", { cookie: user.cookie, body: { success_url: "https://example.com/ok", cancel_url: "https://example.com/no" } });
    expect(setup.status).toBe(200);
    const customer = (await server.app.context.db.connection.collection("billing_accounts").findOne({ _id: user.id as never }))?.stripeCustomerId as string;
    expect((await deliver(server, stripeEvent("setup_intent.succeeded", { id: "seti_mock", object: "setup_intent", customer, payment_method: "pm_card_visa", status: "succeeded" }))).status).toBe(200);
    const { key } = await server.app.context.apiKeys.create(user.id, { name: "test" });
    await credit(server, user.id, 1);
    expect((await call(server, "PUT", "/api/billing/settings", { cookie: user.cookie, body: { auto_topup: { enabled: true, threshold: 0.95, amount: 10 } } })).status).toBe(200);
    const res = await postJson(server, "/api/v1/imageA/generate", key, { prompt: "a kite" });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    // the attempt is claimed once it starts; the purchase it made is linked to stripe-mock's payment intent
    await vi.waitFor(async () => {
      const purchase = await server.app.context.db.connection.collection("billing_purchases").findOne({ userId: user.id, source: "auto_topup" });
      expect(purchase?.paymentIntentId).toMatch(/^pi_/);
    }, { timeout: 15_000 });
    expect(mailsTo(server, user.email).filter((m) => m.subject.startsWith("Auto top-up failed"))).toHaveLength(0);
    expect((await call(server, "GET", "/api/billing/settings", { cookie: user.cookie })).body.auto_topup.enabled).toBe(true);
  });
});
