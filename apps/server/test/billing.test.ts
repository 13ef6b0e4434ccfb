import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeStripe, type FakeStripe } from "@gw/test-support";
import { call, PASSWORD, RELAXED_LIMITS, signup, login, uniqueEmail, verifiedUser, mailsTo } from "./auth-helpers";
import { deliver, expectLedgerConsistent, stripeEvent } from "./billing-support";
import { startTestServer, type TestServer } from "./harness";

/** the validation tables send more than SPEC 8's 10 per minute */
const BILLING_LIMITS = { LIMIT_PAYMENT_INTENT: "1000/60", LIMIT_CHECKOUT: "1000/60", LIMIT_SUBSCRIPTION: "1000/60" };

const urls = { success_url: "https://example.com/success", cancel_url: "https://example.com/cancel" };

async function apiKeyFor(server: TestServer, cookie: string): Promise<string> {
  const res = await call(server, "POST", "/api/keys", { cookie, body: { name: "billing tests" } });
  expect(res.status).toBe(201);
  return res.body.key as string;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe("billing API against stripe-mock", () => {
  let server: TestServer;
  let cookie: string;
  let userId: string;

  beforeAll(async () => {
    server = await startTestServer({ env: { ...RELAXED_LIMITS, ...BILLING_LIMITS } });
    ({ cookie, id: userId } = await verifiedUser(server));
  });
  afterAll(async () => {
    await expectLedgerConsistent(server, [userId]);
    await server.close();
  });

  describe("GET /api/billing/credits", () => {
    it("answers the balance in dollars to a session and to an API key", async () => {
      const bySession = await call(server, "GET", "/api/billing/credits", { cookie });
      expect(bySession.status).toBe(200);
      expect(bySession.body).toEqual({ balance: 0, currency: "USD" });
      expect(bySession.headers.get("cache-control")).toBe("no-store");
      const key = await apiKeyFor(server, cookie);
      const byKey = await call(server, "GET", "/api/billing/credits", { headers: bearer(key) });
      expect(byKey.status).toBe(200);
      expect(byKey.body).toEqual({ balance: 0, currency: "USD" });
    });

    it("reads the Authorization header as the gateway, /api/trpc and the key routes do: a tab separates, a no-break space does not", async () => {
      const key = await apiKeyFor(server, cookie);
      for (const [authorization, ok] of [[`bearer\t${key} `, true], [`Bearer\u00a0${key}`, false]] as const) {
        const routes = ["/api/billing/credits", "/api/trpc/billing.credits", "/v1/models"];
        const statuses = await Promise.all(routes.map(async (route) => (await call(server, "GET", route, { headers: { authorization } })).status));
        expect({ authorization, statuses }).toEqual({ authorization, statuses: ok ? [200, 200, 200] : [401, 401, 401] });
      }
    });

    it("answers 401 in the flat form without or with bad credentials", async () => {
      const attempts: Array<Record<string, string>> = [{}, bearer("ak-live-nope"), { authorization: "Basic abc" }, { cookie: "gw_session=garbage" }];
      for (const headers of attempts) {
        const res = await call(server, "GET", "/api/billing/credits", { headers });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: "Unauthorized" });
        expect(res.headers.get("cache-control")).toBe("no-store");
      }
    });
  });

  it("GET /api/billing/config lists plans with features, the three packages and the publishable key", async () => {
    const res = await call(server, "GET", "/api/billing/config", { cookie });
    expect(res.status).toBe(200);
    expect(res.body.credit_packages).toEqual([
      { amount: 10, bonus: 0, total: 10 },
      { amount: 50, bonus: 5, total: 55 },
      { amount: 100, bonus: 15, total: 115 },
    ]);
    expect(res.body.payment_publishable_key).toBe("pk_test_123");
    const ids = (res.body.plans as Array<{ id: string }>).map((p) => p.id);
    expect(ids).toEqual(["free", "pro", "team"]);
    expect(res.body.plans[1]).toEqual({
      id: "pro", name: "Pro", price: 20, currency: "usd", interval: "month", features: expect.arrayContaining([expect.any(String)]),
    });
  });

  describe("POST /api/billing/create-payment-intent", () => {
    it("answers the client secret, id and the amount in cents", async () => {
      const res = await call(server, "POST", "/api/billing/create-payment-intent", { cookie, body: { amount: 50 } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ client_secret: expect.any(String), payment_intent_id: expect.stringMatching(/^pi_/), amount: 5000, currency: "usd" });
      const cents = await call(server, "POST", "/api/billing/create-payment-intent", { cookie, body: { amount: 19.99, currency: "usd" } });
      expect(cents.status).toBe(200);
      expect(cents.body.amount).toBe(1999);
    });

    it.each([
      ["zero", 0], ["negative", -5], ["too large", 10_001], ["a string", "10"], ["a boolean", true], ["an array", [10]], ["an empty string", ""], ["three decimals", 10.005], ["null", null], ["an object", { $gt: 1 }],
    ])("refuses an amount that is %s with 400 invalid_parameter", async (_what, amount) => {
      const res = await call(server, "POST", "/api/billing/create-payment-intent", { cookie, body: { amount } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_parameter" });
      expect(res.body.error.message).toContain("amount");
    });

    it("refuses a missing amount with 400 missing_required_parameter, and a foreign currency", async () => {
      const missing = await call(server, "POST", "/api/billing/create-payment-intent", { cookie, body: {} });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatchObject({ code: "missing_required_parameter", type: "invalid_request_error" });
      expect(missing.body.error.message).toContain("amount");
      const eur = await call(server, "POST", "/api/billing/create-payment-intent", { cookie, body: { amount: 10, currency: "eur" } });
      expect(eur.status).toBe(400);
      expect(eur.body.error.code).toBe("invalid_parameter");
    });

    it("refuses malformed JSON with 400 invalid_json", async () => {
      const res = await call(server, "POST", "/api/billing/create-payment-intent", { cookie, raw: "{amount: 10" });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_json");
    });
  });

  describe("POST /api/billing/create-checkout-session", () => {
    it("creates a credits checkout and a subscription checkout", async () => {
      const credits = await call(server, "POST", "/api/billing/create-checkout-session", { cookie, body: { type: "credits", amount: 10, ...urls } });
      expect(credits.status).toBe(200);
      expect(credits.body).toEqual({ session_id: expect.stringMatching(/^cs_/), url: expect.any(String) });
      const sub = await call(server, "POST", "/api/billing/create-checkout-session", { cookie, body: { type: "subscription", plan_id: "pro", ...urls } });
      expect(sub.status).toBe(200);
      expect(sub.body).toEqual({ session_id: expect.any(String), url: expect.any(String) });
    });

    it.each([
      ["no type", { amount: 10, ...urls }, 400, "missing_required_parameter", "type"],
      ["an unknown type", { type: "gift", amount: 10, ...urls }, 400, "invalid_parameter", "type"],
      ["credits without amount", { type: "credits", ...urls }, 400, "missing_required_parameter", "amount"],
      ["credits with amount 0", { type: "credits", amount: 0, ...urls }, 400, "invalid_parameter", "amount"],
      ["subscription without plan", { type: "subscription", ...urls }, 400, "missing_required_parameter", "plan_id"],
      ["an unknown plan", { type: "subscription", plan_id: "platinum", ...urls }, 404, "plan_not_found", "platinum"],
      ["the free plan", { type: "subscription", plan_id: "free", ...urls }, 400, "invalid_parameter", "plan_id"],
      ["no success_url", { type: "credits", amount: 10, cancel_url: urls.cancel_url }, 400, "missing_required_parameter", "success_url"],
      ["a non-http cancel_url", { type: "credits", amount: 10, success_url: urls.success_url, cancel_url: "javascript:alert(1)" }, 400, "invalid_parameter", "cancel_url"],
      ["a relative success_url", { type: "credits", amount: 10, success_url: "/done", cancel_url: urls.cancel_url }, 400, "invalid_parameter", "success_url"],
      ["a success_url with a space", { type: "credits", amount: 10, success_url: "https://example.com/a b", cancel_url: urls.cancel_url }, 400, "invalid_parameter", "success_url"],
      ["a cancel_url with a line break", { type: "credits", amount: 10, success_url: urls.success_url, cancel_url: "https://example.com/\nx" }, 400, "invalid_parameter", "cancel_url"],
    ])("refuses %s", async (_what, body, status, code, named) => {
      const res = await call(server, "POST", "/api/billing/create-checkout-session", { cookie, body });
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.message).toContain(named);
    });
  });

  describe("POST /api/billing/create-subscription", () => {
    it("refuses an unknown plan with 404 plan_not_found and a missing payment method with 400", async () => {
      const unknown = await call(server, "POST", "/api/billing/create-subscription", { cookie, body: { plan_id: "gold", payment_method_id: "pm_card_visa" } });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: { message: expect.stringContaining("gold"), type: "not_found_error", code: "plan_not_found" } });
      const noPm = await call(server, "POST", "/api/billing/create-subscription", { cookie, body: { plan_id: "pro" } });
      expect(noPm.status).toBe(400);
      expect(noPm.body.error).toMatchObject({ code: "missing_required_parameter" });
      expect(noPm.body.error.message).toContain("payment_method_id");
    });

    it("subscribes through stripe-mock and answers the SPEC 2.11 shape", async () => {
      const res = await call(server, "POST", "/api/billing/create-subscription", { cookie, body: { plan_id: "pro", payment_method_id: "pm_card_visa" } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        subscription_id: expect.stringMatching(/^sub_/),
        status: expect.any(String),
        current_period_start: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        current_period_end: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        cancel_at_period_end: expect.any(Boolean), // stripe-mock answers a fixture
        plan: { id: "pro", name: "Pro", price: 20, currency: "usd", interval: "month" },
      });
    });
  });

  it("answers 403 email_not_verified to an unverified account on the three create endpoints", async () => {
    const email = uniqueEmail("unverified");
    await signup(server, email);
    const unverified = await login(server, email);
    for (const [route, body] of [
      ["/api/billing/create-payment-intent", { amount: 10 }],
      ["/api/billing/create-checkout-session", { type: "credits", amount: 10, ...urls }],
      ["/api/billing/create-subscription", { plan_id: "pro", payment_method_id: "pm_card_visa" }],
    ] as const) {
      const res = await call(server, "POST", route, { cookie: unverified, body });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: "email_not_verified", type: "permission_error" });
    }
    const credits = await call(server, "GET", "/api/billing/credits", { cookie: unverified });
    expect(credits.status).toBe(200);
  });

  it("reports payment_provider healthy in the external status and documents the billing routes", async () => {
    const status = await call(server, "GET", "/api/status/external");
    expect(status.status).toBe(200);
    expect(status.body.services.payment_provider.status).toBe("healthy");
    const doc = await call(server, "GET", "/api/openapi.json");
    for (const route of ["/api/billing/config", "/api/billing/create-checkout-session", "/api/billing/create-payment-intent", "/api/billing/create-subscription", "/api/billing/subscription", "/api/billing/history"]) {
      expect(Object.keys(doc.body.paths as object).some((p) => p.endsWith(route.replace(/^\/api/, "")))).toBe(true);
    }
  });

  it("answers 401 on the create endpoints without authentication", async () => {
    const res = await call(server, "POST", "/api/billing/create-payment-intent", { body: { amount: 10 } });
    expect(res.status).toBe(401);
    expect(res.body.error.type).toBe("authentication_error");
  });
});

describe("billing behaviour against a stateful fake Stripe", () => {
  let server: TestServer;
  let fake: FakeStripe;
  const userIds: string[] = [];

  beforeAll(async () => {
    fake = await startFakeStripe({ now: () => server.clock.now() });
    server = await startTestServer({ env: { ...RELAXED_LIMITS, STRIPE_API_BASE: fake.url } });
  });
  afterAll(async () => {
    await expectLedgerConsistent(server, userIds);
    await server.close();
    await fake.close();
  });

  async function user(): Promise<{ email: string; cookie: string; id: string }> {
    const u = await verifiedUser(server);
    userIds.push(u.id);
    return u;
  }

  it("buys credits: the payment intent carries the grant in metadata and the webhook credits amount + bonus once", async () => {
    const u = await user();
    const created = await call(server, "POST", "/api/billing/create-payment-intent", { cookie: u.cookie, body: { amount: 100 } });
    expect(created.status).toBe(200);
    const stored = fake.objects.get(created.body.payment_intent_id as string) as Record<string, unknown>;
    expect(stored).toMatchObject({ amount: 10_000, currency: "usd" });
    expect(stored.metadata).toMatchObject({ user_id: u.id, credits_micros: "100000000", bonus_micros: "15000000" });
    const createCall = fake.requests.find((r) => r.path === "/v1/payment_intents" && r.method === "POST");
    expect(createCall?.idempotencyKey).toBeTruthy();

    const event = stripeEvent("payment_intent.succeeded", { ...stored, status: "succeeded", amount_received: 10_000 });
    expect((await deliver(server, event)).status).toBe(200);
    expect((await deliver(server, event)).status).toBe(200);
    const credits = await call(server, "GET", "/api/billing/credits", { cookie: u.cookie });
    expect(credits.body).toEqual({ balance: 115, currency: "USD" });

    const history = await call(server, "GET", "/api/billing/history", { cookie: u.cookie });
    expect(history.status).toBe(200);
    expect(history.body.entries.map((e: { type: string; amount: number }) => [e.type, e.amount])).toEqual([["bonus", 15], ["purchase", 100]]);
    expect(history.body.entries[0].balance_after).toBe(115);
    expect(history.body.next_before).toBeNull();

    // pages: `limit` and `before` in decimal digits; anything else a number could be read from is refused
    const first = await call(server, "GET", "/api/billing/history?limit=1", { cookie: u.cookie });
    expect(first.body.entries.map((e: { type: string }) => e.type)).toEqual(["bonus"]);
    expect(first.body.next_before).toEqual(expect.any(Number));
    const second = await call(server, "GET", `/api/billing/history?limit=1&before=${first.body.next_before}`, { cookie: u.cookie });
    expect(second.body.entries.map((e: { type: string }) => e.type)).toEqual(["purchase"]);
    for (const query of ["limit=1e1", "limit=0x10", "limit=%201", "limit=0", "limit=101", "limit=1.5", "limit=abc", "before=1e3", "before=-1"]) {
      const bad = await call(server, "GET", `/api/billing/history?${query}`, { cookie: u.cookie });
      expect({ query, status: bad.status, code: bad.body.error?.code }).toEqual({ query, status: 400, code: "invalid_parameter" });
    }
    // the message names the rule broken, as /api/usage's does; "must be a number or a string" was said of a string
    for (const [query, rule] of [["limit=abc", "'limit': must be a whole number."], ["limit=1.5", "'limit': must be a whole number."], ["before=-1", "'before': must be a whole number."], ["limit=0", "'limit': must be at least 1."]]) {
      const bad = await call(server, "GET", `/api/billing/history?${query}`, { cookie: u.cookie });
      expect({ query, message: bad.body.error?.message }).toEqual({ query, message: `Invalid parameter ${rule}` });
    }
  });

  it("refuses a declined card with 402 invalid_payment_method and stays on the free plan", async () => {
    const u = await user();
    const res = await call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: "pro", payment_method_id: "pm_card_chargeDeclined" } });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: { message: expect.stringContaining("declined"), type: "payment_error", code: "invalid_payment_method" } });
    const current = await call(server, "GET", "/api/billing/subscription", { cookie: u.cookie });
    expect(current.body.subscription).toBeNull();
    expect(current.body.plan.id).toBe("free");
  });

  it("subscribes, applies the plan's limits, grants monthly credits per invoice, and e-mails a failed payment", async () => {
    const u = await user();
    const res = await call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: "pro", payment_method_id: "pm_card_visa" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "active", plan: { id: "pro", name: "Pro", price: 20, currency: "usd", interval: "month" } });
    const sub = fake.objects.get(res.body.subscription_id as string) as Record<string, unknown>;
    expect(sub.metadata).toEqual({ user_id: u.id, plan_id: "pro" });
    expect(fake.requests.some((r) => r.path === "/v1/payment_methods/pm_card_visa/attach")).toBe(true);

    const current = await call(server, "GET", "/api/billing/subscription", { cookie: u.cookie });
    expect(current.status).toBe(200);
    expect(current.body).toEqual({
      subscription: res.body,
      plan: { id: "pro", name: "Pro", price: 20, currency: "usd", interval: "month", features: expect.any(Array) },
      limits: { requests_per_minute: 600, concurrent_requests: 20, monthly_credits: 20 },
    });

    const invoice = { id: "in_http_1", object: "invoice", customer: sub.customer, amount_paid: 2000, amount_due: 2000, currency: "usd",
      parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } } };
    await deliver(server, stripeEvent("invoice.payment_succeeded", invoice));
    await deliver(server, stripeEvent("invoice.payment_succeeded", invoice));
    expect((await call(server, "GET", "/api/billing/credits", { cookie: u.cookie })).body.balance).toBe(20);

    const failed = { ...invoice, id: "in_http_2", amount_paid: 0 };
    await deliver(server, stripeEvent("invoice.payment_failed", failed, { created: Math.floor(server.clock.now() / 1000) + 60 }));
    const after = await call(server, "GET", "/api/billing/subscription", { cookie: u.cookie });
    expect(after.body.subscription.status).toBe("past_due");
    expect(mailsTo(server, u.email).some((m) => m.subject.includes("payment failed"))).toBe(true);
  });

  it("creates one Stripe subscription when create-subscription is sent several times at once (a double click), one per plan too", async () => {
    const subscriptionsOf = (customer: unknown) => [...fake.objects.values()].filter((o) => o.object === "subscription" && o.customer === customer);
    const u = await user();
    const send = (plan: string) => call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: plan, payment_method_id: "pm_card_visa" } });
    const answers = await Promise.all([send("pro"), send("pro"), send("team")]);
    const ok = answers.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const refused of answers.filter((r) => r.status !== 200)) {
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ type: "invalid_request_error", code: "conflict" });
    }
    const subscriptionId = ok[0]?.body.subscription_id as string;
    const customer = (fake.objects.get(subscriptionId) as Record<string, unknown>).customer;
    expect(subscriptionsOf(customer)).toHaveLength(1);
    // once the first has finished, the same plan answers the subscription it made and another plan is a conflict
    const again = await send(ok[0]?.body.plan.id as string);
    expect(again.status).toBe(200);
    expect(again.body.subscription_id).toBe(subscriptionId);
    expect(subscriptionsOf(customer)).toHaveLength(1);
  });

  it("refuses a subscription checkout with 409 conflict while a subscription is active, opening no second one", async () => {
    const u = await user();
    const res = await call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: "pro", payment_method_id: "pm_card_visa" } });
    expect(res.status).toBe(200);
    const sessionsBefore = fake.requests.filter((r) => r.path === "/v1/checkout/sessions").length;
    for (const [planId, named] of [["team", "cancel it before subscribing to 'team'"], ["pro", "already subscribed to 'pro'"]]) {
      const checkout = await call(server, "POST", "/api/billing/create-checkout-session", { cookie: u.cookie, body: { type: "subscription", plan_id: planId, ...urls } });
      expect(checkout.status).toBe(409);
      expect(checkout.body.error).toMatchObject({ code: "conflict", type: "invalid_request_error" });
      expect(checkout.body.error.message).toContain(named);
    }
    expect(fake.requests.filter((r) => r.path === "/v1/checkout/sessions").length).toBe(sessionsBefore);
    // credits can still be bought by a subscriber
    const credits = await call(server, "POST", "/api/billing/create-checkout-session", { cookie: u.cookie, body: { type: "credits", amount: 10, ...urls } });
    expect(credits.status).toBe(200);
  });

  it("cancels at the end of the period: the plan applies until the processor ends it, a second cancel changes nothing", async () => {
    const u = await user();
    const created = await call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: "pro", payment_method_id: "pm_card_visa" } });
    expect(created.status).toBe(200);
    expect(created.body.cancel_at_period_end).toBe(false);
    const cancelled = await call(server, "POST", "/api/billing/cancel-subscription", { cookie: u.cookie, body: {} });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ ...created.body, cancel_at_period_end: true });
    const sub = fake.objects.get(created.body.subscription_id as string) as Record<string, unknown>;
    expect(sub).toMatchObject({ status: "active", cancel_at_period_end: true });

    const current = await call(server, "GET", "/api/billing/subscription", { cookie: u.cookie });
    expect(current.body.subscription).toEqual(cancelled.body);
    expect(current.body.plan.id).toBe("pro");
    const updates = () => fake.requests.filter((r) => r.method === "POST" && r.path === `/v1/subscriptions/${sub.id as string}`).length;
    const before = updates();
    const again = await call(server, "POST", "/api/billing/cancel-subscription", { cookie: u.cookie });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(cancelled.body);
    expect(updates()).toBe(before);
    // another plan: after this one ends, or by cancelling it at once
    const other = await call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: "team", payment_method_id: "pm_card_visa" } });
    expect(other.status).toBe(409);
    expect(other.body.error.message).toContain(`subscription ends on ${(created.body.current_period_end as string).slice(0, 10)}`);

    const ended = { ...sub, status: "canceled", canceled_at: Math.floor(server.clock.now() / 1000) + 60 };
    expect((await deliver(server, stripeEvent("customer.subscription.deleted", ended, { created: Math.floor(server.clock.now() / 1000) + 60 }))).status).toBe(200);
    const after = await call(server, "GET", "/api/billing/subscription", { cookie: u.cookie });
    expect(after.body.subscription).toBeNull();
    expect(after.body.plan.id).toBe("free");
    expect((await server.app.context.plans.planFor(u.id)).id).toBe("free");
  });

  it("cancels at the end of the period again after the subscription was resumed at Stripe: Stripe is asked again", async () => {
    const u = await user();
    const created = await call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: "pro", payment_method_id: "pm_card_visa" } });
    expect(created.status).toBe(200);
    const first = await call(server, "POST", "/api/billing/cancel-subscription", { cookie: u.cookie, body: {} });
    expect(first.body).toMatchObject({ status: "active", cancel_at_period_end: true });
    // the customer resumes it in Stripe's customer portal; Stripe announces it
    const sub = fake.objects.get(created.body.subscription_id as string) as Record<string, unknown>;
    sub.cancel_at_period_end = false;
    const resumedAt = Math.floor(server.clock.now() / 1000) + 60;
    expect((await deliver(server, stripeEvent("customer.subscription.updated", { ...sub }, { created: resumedAt }))).status).toBe(200);
    expect((await call(server, "GET", "/api/billing/subscription", { cookie: u.cookie })).body.subscription).toMatchObject({ cancel_at_period_end: false });

    const again = await call(server, "POST", "/api/billing/cancel-subscription", { cookie: u.cookie, body: {} });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...created.body, cancel_at_period_end: true });
    // a fresh request reached Stripe (its idempotency key replays the first cancel's answer for 24 h, changing nothing)
    const keys = fake.requests.filter((r) => r.method === "POST" && r.path === `/v1/subscriptions/${sub.id as string}`).map((r) => r.idempotencyKey);
    expect(new Set(keys).size).toBe(2);
    expect(sub.cancel_at_period_end).toBe(true);
    expect((await call(server, "GET", "/api/billing/subscription", { cookie: u.cookie })).body.subscription).toEqual(again.body);
  });

  it("cancels at once with at_period_end false: free plan now; nothing left to cancel is a 404", async () => {
    const free = await user();
    const nothing = await call(server, "POST", "/api/billing/cancel-subscription", { cookie: free.cookie, body: {} });
    expect(nothing.status).toBe(404);
    expect(nothing.body).toEqual({ error: { message: "You have no active subscription to cancel.", type: "not_found_error", code: "not_found" } });
    // five calls: the limit create-subscription and cancel-subscription share
    const u = await user();
    const created = await call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: "team", payment_method_id: "pm_card_visa" } });
    expect(created.status).toBe(200);
    const wrong = await call(server, "POST", "/api/billing/cancel-subscription", { cookie: u.cookie, body: { at_period_end: "no" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_parameter" });
    expect(wrong.body.error.message).toContain("at_period_end");

    const cancelled = await call(server, "POST", "/api/billing/cancel-subscription", { cookie: u.cookie, body: { at_period_end: false } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ subscription_id: created.body.subscription_id, status: "canceled", plan: { id: "team" } });
    expect((fake.objects.get(created.body.subscription_id as string) as Record<string, unknown>).status).toBe("canceled");
    expect((await call(server, "GET", "/api/billing/subscription", { cookie: u.cookie })).body.plan.id).toBe("free");
    expect((await server.app.context.plans.planFor(u.id)).id).toBe("free");
    expect((await call(server, "POST", "/api/billing/cancel-subscription", { cookie: u.cookie, body: { at_period_end: false } })).status).toBe(404);
    // a new subscription is possible at once
    const again = await call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: "pro", payment_method_id: "pm_card_visa" } });
    expect(again.status).toBe(200);
    expect(again.body.subscription_id).not.toBe(created.body.subscription_id);
  });

  it("cancels an active subscription at Stripe when the account is deleted", async () => {
    const u = await user();
    const res = await call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: "team", payment_method_id: "pm_card_visa" } });
    expect(res.status).toBe(200);
    const deleted = await call(server, "DELETE", "/api/auth/me", { cookie: u.cookie, body: { password: PASSWORD } });
    expect(deleted.status).toBe(200);
    expect((fake.objects.get(res.body.subscription_id as string) as Record<string, unknown>).status).toBe("canceled");
    expect((await server.app.context.plans.planFor(u.id)).id).toBe("free");
  });

  it("limits create-subscription to 5 per minute", async () => {
    const u = await user();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await call(server, "POST", "/api/billing/create-subscription", { cookie: u.cookie, body: { plan_id: "nope", payment_method_id: "pm_card_visa" } })).status);
    }
    expect(statuses).toEqual([404, 404, 404, 404, 404, 429]);
  });
});

