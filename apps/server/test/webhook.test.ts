import { describe, expect, it, vi } from "vitest";
import { ChainWriter } from "@gw/billing";
import { newId } from "@gw/shared";
import type { FakeStripe } from "@gw/test-support";
import { call, mailsTo, verifiedUser } from "./auth-helpers";
import { deliver, deliverConcurrently, expectLedgerConsistent, stripeEvent, webhookStand } from "./billing-support";
import { startTestServer, type TestServer } from "./harness";

const MICROS = 1_000_000;

describe("POST /api/billing/webhook", () => {
  let server: TestServer;
  let fake: FakeStripe;
  const { users, newUser } = webhookStand((s, f) => {
    server = s;
    fake = f;
  });
  const nowSeconds = () => Math.floor(server.clock.now() / 1000);
  const ctx = () => server.app.context;

  /** A payment intent created through the gateway, as Stripe reports it once paid. */
  async function paidIntent(userId: string, amount: number): Promise<Record<string, unknown>> {
    const created = await ctx().billing.createPaymentIntent(userId, { amount });
    const stored = fake.objects.get(created.payment_intent_id);
    expect(stored).toBeDefined();
    return { ...stored, status: "succeeded", amount_received: created.amount };
  }

  describe("signature", () => {
    it("refuses a missing signature with 400 and changes nothing", async () => {
      const userId = newUser();
      const intent = await paidIntent(userId, 10);
      const res = await deliver(server, stripeEvent("payment_intent.succeeded", intent), { signature: null });
      expect(res.status).toBe(400);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(await res.json()).toEqual({
        error: { message: "Missing required parameter: 'Stripe-Signature'.", type: "invalid_request_error", code: "missing_required_parameter" },
      });
      expect(await ctx().ledger.balance(userId)).toBe(0);
    });

    it("refuses a wrong secret, a tampered body, an expired timestamp and one more than 300 s ahead with 400", async () => {
      const userId = newUser();
      const intent = await paidIntent(userId, 10);
      const event = stripeEvent("payment_intent.succeeded", intent);
      const payload = JSON.stringify(event);
      const { default: Stripe } = await import("stripe");
      const wrongSecret = Stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_other" });
      const expired = Stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_test_secret", timestamp: Math.floor(Date.now() / 1000) - 3600 });
      // validly signed, but a day ahead (the SDK checks only the past)
      const future = Stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_test_secret", timestamp: Math.floor(Date.now() / 1000) + 86_400 });
      const justAhead = Stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_test_secret", timestamp: Math.floor(Date.now() / 1000) + 330 });
      const tampered = JSON.stringify({ ...event, data: { object: { ...intent, amount: 999_999 } } });
      for (const res of [
        await deliver(server, event, { signature: wrongSecret }),
        await deliver(server, event, { signature: expired }),
        await deliver(server, event, { signature: future }),
        await deliver(server, event, { signature: justAhead }),
        await deliver(server, event, { payload: tampered }),
        await deliver(server, event, { signature: "t=1,v1=deadbeef" }),
      ]) {
        expect(res.status).toBe(400);
        const body = (await res.json()) as { error: { code: string; type: string } };
        expect(body.error).toMatchObject({ code: "invalid_parameter", type: "invalid_request_error", message: expect.stringContaining("'Stripe-Signature'") });
      }
      expect(await ctx().ledger.balance(userId)).toBe(0);
      // a sender's clock a minute ahead is within the tolerance
      const slightlyAhead = Stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_test_secret", timestamp: Math.floor(Date.now() / 1000) + 60 });
      expect((await deliver(server, event, { signature: slightlyAhead })).status).toBe(200);
      expect(await ctx().ledger.balance(userId)).toBe(10 * MICROS);
    });
  });

  describe("payment_intent.succeeded", () => {
    it("grants amount + package bonus once when one event is delivered 3 times, shuffled and concurrently", async () => {
      const userId = newUser();
      const intent = await paidIntent(userId, 50);
      const event = stripeEvent("payment_intent.succeeded", intent);
      const statuses = await deliverConcurrently(server, [event, event, event]);
      expect(statuses).toEqual([200, 200, 200]);
      expect(await ctx().ledger.balance(userId)).toBe(55 * MICROS);
      const entries = await ctx().ledger.entries(userId);
      expect(entries.map((e) => e.kind).sort()).toEqual(["bonus", "purchase"]);
    });

    it("grants each of several payments once when all are delivered 3 times, interleaved", async () => {
      const userId = newUser();
      const intents = await Promise.all([paidIntent(userId, 10), paidIntent(userId, 100), paidIntent(userId, 12.34)]);
      const events = intents.map((i) => stripeEvent("payment_intent.succeeded", i));
      const statuses = await deliverConcurrently(server, [...events, ...events, ...events]);
      expect(statuses.every((s) => s === 200)).toBe(true);
      expect(await ctx().ledger.balance(userId)).toBe((10 + 115 + 12.34) * MICROS);
    });

    it("grants once when different events announce the same payment intent", async () => {
      const userId = newUser();
      const intent = await paidIntent(userId, 10);
      const first = stripeEvent("payment_intent.succeeded", intent);
      const resent = stripeEvent("payment_intent.succeeded", intent); // a new event id for the same money
      expect((await deliver(server, first)).status).toBe(200);
      expect((await deliver(server, resent)).status).toBe(200);
      expect(await ctx().ledger.balance(userId)).toBe(10 * MICROS);
    });

    it("answers {received: true}", async () => {
      const intent = await paidIntent(newUser(), 10);
      const res = await deliver(server, stripeEvent("payment_intent.succeeded", intent));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true });
    });

    it("shows in the history's balance_after the balance /api/billing/credits shows, while credits are reserved for requests", async () => {
      const user = await verifiedUser(server);
      users.push(user.id);
      expect((await deliver(server, stripeEvent("payment_intent.succeeded", await paidIntent(user.id, 10)))).status).toBe(200);
      // a request in flight: the instance reserves a chunk of the balance, more than the request holds
      const holdId = newId("hold");
      expect((await ctx().ledger.hold(user.id, 1000, { holdId })).ok).toBe(true);
      expect((await deliver(server, stripeEvent("payment_intent.succeeded", await paidIntent(user.id, 10)))).status).toBe(200);
      const credits = await call(server, "GET", "/api/billing/credits", { cookie: user.cookie });
      expect(credits.body).toEqual({ balance: 19.999, currency: "USD" });
      const history = await call(server, "GET", "/api/billing/history", { cookie: user.cookie });
      expect(history.body.entries).toMatchObject([{ type: "purchase", amount: 10, balance_after: 19.999 }, { type: "purchase", amount: 10, balance_after: 10 }]);
      await ctx().ledger.settle(user.id, holdId, 1000);
    });

    it("grants amount + bonus once for an intent made outside the gateway whose metadata names a real user", async () => {
      // what a processor-dashboard payment (or a test built from CONTRACT 6 alone) looks like: only user id in metadata
      const user = await verifiedUser(server);
      users.push(user.id);
      const external = {
        id: `pi_external_${newId("x")}`, object: "payment_intent", amount: 5000, amount_received: 5000, currency: "usd",
        status: "succeeded", metadata: { user_id: user.id, credits: "55" },
      };
      const events = [1, 2, 3].map(() => stripeEvent("payment_intent.succeeded", external));
      const statuses = await deliverConcurrently(server, [...events, ...events]);
      expect(statuses.every((s) => s === 200)).toBe(true);
      const credits = await call(server, "GET", "/api/billing/credits", { cookie: user.cookie });
      expect(credits.status).toBe(200);
      expect(credits.body).toEqual({ balance: 55, currency: "USD" });
      const entries = await ctx().ledger.entries(user.id);
      expect(entries.map((e) => e.kind).sort()).toEqual(["bonus", "purchase"]);
    });

    it("ignores an outside intent in another currency or without an amount", async () => {
      const user = await verifiedUser(server);
      users.push(user.id);
      const base = { object: "payment_intent", status: "succeeded", metadata: { user_id: user.id } };
      await deliver(server, stripeEvent("payment_intent.succeeded", { ...base, id: `pi_eur_${newId("x")}`, amount: 1000, currency: "eur" }));
      await deliver(server, stripeEvent("payment_intent.succeeded", { ...base, id: `pi_zero_${newId("x")}`, amount: 0, currency: "usd" }));
      expect(await ctx().ledger.balance(user.id)).toBe(0);
    });

    it("ignores a payment intent the gateway never created for an unknown user (200, nothing granted)", async () => {
      const userId = newUser();
      const stranger = { id: "pi_unknown_123", object: "payment_intent", amount: 5000, currency: "usd", status: "succeeded", metadata: { user_id: userId } };
      const res = await deliver(server, stripeEvent("payment_intent.succeeded", stranger));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true });
      expect(await ctx().ledger.balance(userId)).toBe(0);
    });

    it("ignores an event whose livemode differs from the secret key's mode", async () => {
      const userId = newUser();
      const intent = await paidIntent(userId, 10);
      const res = await deliver(server, stripeEvent("payment_intent.succeeded", intent, { livemode: true }));
      expect(res.status).toBe(200);
      expect(await ctx().ledger.balance(userId)).toBe(0);
    });
  });

  describe("checkout.session.completed", () => {
    it("grants a credit checkout once, also when its payment intent's event arrives too", async () => {
      const userId = newUser();
      const session = await ctx().billing.createCheckoutSession(userId, {
        type: "credits", amount: 100, success_url: "https://example.com/ok", cancel_url: "https://example.com/no",
      });
      const stored = fake.objects.get(session.session_id) as Record<string, unknown>;
      const metadata = stored.metadata as Record<string, string>;
      expect(metadata).toMatchObject({ user_id: userId, credits_micros: String(100 * MICROS), bonus_micros: String(15 * MICROS) });
      expect((stored.payment_intent_data as { metadata: Record<string, string> }).metadata).toEqual(metadata);

      const completed = { ...stored, status: "complete", payment_status: "paid", payment_intent: "pi_from_checkout_1" };
      const intent = { id: "pi_from_checkout_1", object: "payment_intent", amount: 10_000, currency: "usd", status: "succeeded", metadata };
      const statuses = await deliverConcurrently(server, [
        stripeEvent("checkout.session.completed", completed),
        stripeEvent("payment_intent.succeeded", intent),
        stripeEvent("checkout.session.completed", completed),
      ]);
      expect(statuses).toEqual([200, 200, 200]);
      expect(await ctx().ledger.balance(userId)).toBe(115 * MICROS);
    });

    it("does not grant an unpaid checkout", async () => {
      const userId = newUser();
      const session = await ctx().billing.createCheckoutSession(userId, {
        type: "credits", amount: 10, success_url: "https://example.com/ok", cancel_url: "https://example.com/no",
      });
      const stored = fake.objects.get(session.session_id) as Record<string, unknown>;
      await deliver(server, stripeEvent("checkout.session.completed", { ...stored, payment_status: "unpaid" }));
      expect(await ctx().ledger.balance(userId)).toBe(0);
    });
  });

  describe("subscriptions", () => {
    async function subscribed(userId: string, planId = "pro"): Promise<Record<string, unknown>> {
      const view = await ctx().billing.createSubscription(userId, { plan_id: planId, payment_method_id: "pm_card_visa" });
      return fake.objects.get(view.subscription_id) as Record<string, unknown>;
    }

    it("applies the newest state whatever the delivery order, and never moves a cancelled subscription back", async () => {
      const userId = newUser();
      const sub = await subscribed(userId);
      expect((await ctx().plans.planFor(userId)).id).toBe("pro");
      const t = nowSeconds();
      const created = stripeEvent("customer.subscription.created", { ...sub, status: "incomplete" }, { created: t });
      const active = stripeEvent("customer.subscription.updated", { ...sub, status: "active" }, { created: t + 10 });
      const pastDue = stripeEvent("customer.subscription.updated", { ...sub, status: "past_due" }, { created: t + 20 });
      for (const e of [pastDue, created, active]) expect((await deliver(server, e)).status).toBe(200);
      let state = await ctx().billing.subscription(userId);
      expect(state.subscription?.status).toBe("past_due");
      expect(state.plan.id).toBe("pro");

      const deleted = stripeEvent("customer.subscription.deleted", { ...sub, status: "canceled" }, { created: t + 30 });
      const lateActive = stripeEvent("customer.subscription.updated", { ...sub, status: "active" }, { created: t + 40 });
      await deliver(server, deleted);
      await deliver(server, lateActive);
      state = await ctx().billing.subscription(userId);
      expect(state.subscription).toBeNull();
      expect(state.plan.id).toBe("free");
      expect(state.limits).toEqual({ requests_per_minute: 20, concurrent_requests: 2, monthly_credits: 0 });
      expect((await ctx().plans.planFor(userId)).id).toBe("free");
    });

    it("applies a subscription made outside the gateway to the user named in its metadata (plan limits follow)", async () => {
      const user = await verifiedUser(server);
      users.push(user.id);
      const t = nowSeconds();
      const sub = {
        id: `sub_external_${newId("x")}`, object: "subscription", status: "active", customer: `cus_external_${newId("x")}`,
        metadata: { user_id: user.id, plan_id: "team" }, cancel_at_period_end: false,
        current_period_start: t, current_period_end: t + 30 * 86_400, items: { object: "list", data: [] },
      };
      expect((await deliver(server, stripeEvent("customer.subscription.created", sub, { created: t }))).status).toBe(200);
      const view = await call(server, "GET", "/api/billing/subscription", { cookie: user.cookie });
      expect(view.status).toBe(200);
      expect(view.body.subscription).toMatchObject({ subscription_id: sub.id, status: "active", plan: { id: "team" } });
      expect(view.body.limits).toEqual({ requests_per_minute: 3000, concurrent_requests: 100, monthly_credits: 110 });
    });

    it("grants the plan's monthly credits once per invoice", async () => {
      const userId = newUser();
      const sub = await subscribed(userId, "team");
      const invoice = (id: string) => ({
        id, object: "invoice", customer: sub.customer, amount_paid: 10_000, amount_due: 10_000, currency: "usd", status: "paid",
        parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } },
      });
      const first = stripeEvent("invoice.payment_succeeded", invoice("in_1"));
      const firstAgain = stripeEvent("invoice.payment_succeeded", invoice("in_1"));
      const statuses = await deliverConcurrently(server, [first, first, firstAgain]);
      expect(statuses).toEqual([200, 200, 200]);
      expect(await ctx().ledger.balance(userId)).toBe(110 * MICROS);
      await deliver(server, stripeEvent("invoice.payment_succeeded", invoice("in_2")));
      expect(await ctx().ledger.balance(userId)).toBe(220 * MICROS);
    });

    it("grants an invoice's plan credits on invoice.paid too (an invoice marked paid out of band sends only that), once with invoice.payment_succeeded", async () => {
      const userId = newUser();
      const sub = await subscribed(userId);
      const invoice = (id: string) => ({
        id, object: "invoice", customer: sub.customer, amount_paid: 2000, amount_due: 2000, currency: "usd", status: "paid",
        parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } },
      });
      const outOfBand = invoice(`in_oob_${newId("x")}`);
      expect((await deliver(server, stripeEvent("invoice.paid", outOfBand))).status).toBe(200);
      expect(await ctx().ledger.balance(userId)).toBe(20 * MICROS);
      const charged = invoice(`in_charged_${newId("x")}`);
      const statuses = await deliverConcurrently(server, [stripeEvent("invoice.paid", charged), stripeEvent("invoice.payment_succeeded", charged), stripeEvent("invoice.paid", charged)]);
      expect(statuses).toEqual([200, 200, 200]);
      expect(await ctx().ledger.balance(userId)).toBe(40 * MICROS);
    });

    it("understands invoices in the older API shape (top-level subscription, line price)", async () => {
      const userId = newUser();
      const sub = await subscribed(userId);
      const priceId = ((sub.items as { data: Array<{ price: { id: string } }> }).data[0]?.price.id) ?? "";
      const legacy = { id: "in_legacy_1", object: "invoice", customer: sub.customer, subscription: sub.id, amount_paid: 2000, currency: "usd",
        lines: { object: "list", data: [{ id: "il_1", object: "line_item", price: { id: priceId, object: "price" } }] } };
      expect((await deliver(server, stripeEvent("invoice.payment_succeeded", legacy))).status).toBe(200);
      expect(await ctx().ledger.balance(userId)).toBe(20 * MICROS);
    });

    it("follows a plan change made at Stripe (the item's new price) for limits and plan credits, though the metadata still names the old plan", async () => {
      const user = await verifiedUser(server);
      users.push(user.id);
      const sub = await subscribed(user.id, "pro");
      const teamSub = await subscribed(newUser(), "team");
      const priceOf = (s: Record<string, unknown>) => (s.items as { data: Array<{ price: { id: string } }> }).data[0]?.price.id ?? "";
      const [proPrice, teamPrice] = [priceOf(sub), priceOf(teamSub)];
      expect(teamPrice).not.toBe(proPrice);
      // an upgrade in the Stripe dashboard or customer portal swaps the item's price; metadata stays plan_id=pro
      const items = sub.items as { data: Array<Record<string, unknown>> };
      const upgraded = { ...sub, items: { ...items, data: items.data.map((item) => ({ ...item, price: { id: teamPrice, object: "price" } })) } };
      const t = nowSeconds();
      expect((await deliver(server, stripeEvent("customer.subscription.updated", upgraded, { created: t + 10 }))).status).toBe(200);
      const view = await call(server, "GET", "/api/billing/subscription", { cookie: user.cookie });
      expect(view.status).toBe(200);
      expect(view.body.subscription).toMatchObject({ subscription_id: sub.id, status: "active", plan: { id: "team", price: 100 } });
      expect(view.body.limits).toEqual({ requests_per_minute: 3000, concurrent_requests: 100, monthly_credits: 110 });

      // the upgrade's proration invoice (old plan's unused time first) and the next cycle's invoice bill the team plan
      const line = (price: string, amount: number) => ({ object: "line_item", amount, pricing: { type: "price_details", price_details: { price, product: "prod_x" } } });
      const invoice = (id: string, lines: unknown[]) => ({
        id, object: "invoice", customer: sub.customer, amount_paid: 10_000, amount_due: 10_000, currency: "usd", status: "paid",
        parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } },
        lines: { object: "list", data: lines },
      });
      const proration = invoice(`in_upgrade_${newId("x")}`, [line(proPrice, -1_000), line(teamPrice, 5_000)]);
      const cycle = invoice(`in_cycle_${newId("x")}`, [line(teamPrice, 10_000)]);
      for (const inv of [proration, cycle]) expect((await deliver(server, stripeEvent("invoice.payment_succeeded", inv))).status).toBe(200);
      const credits = await call(server, "GET", "/api/billing/credits", { cookie: user.cookie });
      expect(credits.body).toEqual({ balance: 220, currency: "USD" });
    });

    it("marks the subscription past_due on a failed invoice", async () => {
      const userId = newUser();
      const sub = await subscribed(userId);
      const invoice = { id: "in_failed_1", object: "invoice", customer: sub.customer, amount_due: 2000, currency: "usd",
        parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } } };
      const res = await deliver(server, stripeEvent("invoice.payment_failed", invoice, { created: nowSeconds() + 60 }));
      expect(res.status).toBe(200);
      const state = await ctx().billing.subscription(userId);
      expect(state.subscription?.status).toBe("past_due");
      expect(await ctx().ledger.balance(userId)).toBe(0);
    });

    it("gives no plan for a failed first invoice: the subscription stays incomplete, not past_due", async () => {
      // Stripe: a subscription whose first invoice fails is `incomplete` (never paid); past_due is a failed renewal
      const user = await verifiedUser(server);
      users.push(user.id);
      const key = await call(server, "POST", "/api/keys", { cookie: user.cookie, body: { name: "k" } });
      const team = (await subscribed(newUser(), "team")).items as { data: Array<{ price: { id: string } }> };
      const subId = `sub_incomplete_${newId("x")}`;
      const firstInvoice = { id: `in_first_${newId("x")}`, object: "invoice", customer: null, billing_reason: "subscription_create",
        status: "open", amount_due: 10_000, currency: "usd", lines: { data: [{ amount: 10_000, pricing: { price_details: { price: team.data[0]?.price.id } } }] },
        parent: { type: "subscription_details", subscription_details: { subscription: subId, metadata: { user_id: user.id, plan_id: "team" } } } };
      expect((await deliver(server, stripeEvent("invoice.payment_failed", firstInvoice, { created: nowSeconds() }))).status).toBe(200);
      const view = await call(server, "GET", "/api/billing/subscription", { cookie: user.cookie });
      expect(view.body).toMatchObject({ subscription: null, plan: { id: "free" } });
      const res = await fetch(`${server.url}/api/v1/models`, { headers: { authorization: `Bearer ${key.body.key as string}` } });
      expect(res.headers.get("x-ratelimit-limit")).toBe(String(ctx().config.plans.find((p) => p.id === "free")?.requestsPerMinute));
      // the subscription Stripe reports as incomplete, then a later failed retry of that invoice: still no plan
      const incomplete = { id: subId, object: "subscription", status: "incomplete", customer: `cus_x_${newId("x")}`, metadata: { user_id: user.id, plan_id: "team" }, items: team };
      expect((await deliver(server, stripeEvent("customer.subscription.created", incomplete, { created: nowSeconds() + 1 }))).status).toBe(200);
      const retry = { ...firstInvoice, billing_reason: "manual" };
      expect((await deliver(server, stripeEvent("invoice.payment_failed", retry, { created: nowSeconds() + 60 }))).status).toBe(200);
      expect((await ctx().plans.planFor(user.id)).id).toBe("free");
      expect(mailsTo(server, user.email).filter((m) => m.subject.includes("payment failed"))).toEqual([]);
    });

    it("sends no payment-failed e-mail for an invoice failure delivered after the subscription was deleted", async () => {
      // Stripe cancels a subscription once the last retry of its invoice fails; the two events can arrive in either order
      const user = await verifiedUser(server);
      users.push(user.id);
      const sub = await subscribed(user.id);
      const t = nowSeconds() + 60;
      expect((await deliver(server, stripeEvent("customer.subscription.deleted", { ...sub, status: "canceled" }, { created: t }))).status).toBe(200);
      const invoice = { id: `in_last_${newId("x")}`, object: "invoice", customer: sub.customer, amount_due: 2000, currency: "usd", billing_reason: "subscription_cycle",
        parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } } };
      expect((await deliver(server, stripeEvent("invoice.payment_failed", invoice, { created: t }))).status).toBe(200);
      expect(mailsTo(server, user.email).filter((m) => m.subject.includes("payment failed"))).toEqual([]);
      const view = await call(server, "GET", "/api/billing/subscription", { cookie: user.cookie });
      expect(view.body).toMatchObject({ subscription: null, plan: { id: "free" } });
    });

    it("keeps a cancellation at period end through a later failed retry of the invoice", async () => {
      const user = await verifiedUser(server);
      users.push(user.id);
      const sub = await subscribed(user.id);
      const invoice = { id: `in_retry_${newId("x")}`, object: "invoice", customer: sub.customer, amount_due: 2000, currency: "usd",
        parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } } };
      expect((await deliver(server, stripeEvent("invoice.payment_failed", invoice, { created: nowSeconds() + 60 }))).status).toBe(200);
      sub.status = "past_due"; // as Stripe has it now
      const cancelled = await call(server, "POST", "/api/billing/cancel-subscription", { cookie: user.cookie, body: {} });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ status: "past_due", cancel_at_period_end: true });
      // Stripe retries the invoice; it fails again
      expect((await deliver(server, stripeEvent("invoice.payment_failed", invoice, { created: nowSeconds() + 120 }))).status).toBe(200);
      const view = await call(server, "GET", "/api/billing/subscription", { cookie: user.cookie });
      expect(view.body.subscription).toEqual(cancelled.body);
    });

    it("ignores subscription events for unknown customers", async () => {
      const stranger = { id: "sub_unknown", object: "subscription", customer: "cus_unknown", status: "active", metadata: { user_id: "usr_nobody" }, items: { data: [] } };
      const res = await deliver(server, stripeEvent("customer.subscription.created", stranger));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true });
    });
  });

  async function paidAndGranted(userId: string, amount: number): Promise<Record<string, unknown>> {
    const intent = await paidIntent(userId, amount);
    expect((await deliver(server, stripeEvent("payment_intent.succeeded", intent))).status).toBe(200);
    return intent;
  }

  /** The exact balance, and that it equals the ledger's sum. */
  async function expectBalance(userId: string, micros: number): Promise<void> {
    await expectLedgerConsistent(server, [userId]);
    expect(await ctx().ledger.balance(userId)).toBe(micros);
  }

  describe("charge.refunded", () => {
    /** The charge of a payment as Stripe reports it after refunds of `refunded` cents in all (cumulative). */
    const refundedCharge = (intent: Record<string, unknown>, refunded: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
      id: `ch_${String(intent.id)}`, object: "charge", amount: intent.amount, amount_refunded: refunded, currency: "usd", paid: true,
      status: "succeeded", refunded: refunded === intent.amount, payment_intent: intent.id, metadata: {},
      refunds: { object: "list", data: [], has_more: false }, ...extra,
    });
    const refundEvent = (intent: Record<string, unknown>, refunded: number, extra?: Record<string, unknown>) =>
      stripeEvent("charge.refunded", refundedCharge(intent, refunded, extra));

    const refundEntries = async (userId: string) =>
      (await ctx().ledger.entries(userId, { kinds: ["refund"] })).map((e) => ({ amount: e.amount, shortfall: e.meta?.shortfall ?? 0 }));

    it("a full refund takes back the purchase and its bonus, once however often it is delivered, and the history shows it", async () => {
      const user = await verifiedUser(server);
      users.push(user.id);
      const intent = await paidAndGranted(user.id, 50);
      await expectBalance(user.id, 55 * MICROS);
      const event = refundEvent(intent, 5000);
      const res = await deliver(server, event);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true });
      expect(await deliverConcurrently(server, [event, event])).toEqual([200, 200]);
      await expectBalance(user.id, 0);
      expect(await refundEntries(user.id)).toEqual([{ amount: -55 * MICROS, shortfall: 0 }]);

      const history = await call(server, "GET", "/api/billing/history", { cookie: user.cookie });
      expect(history.status).toBe(200);
      const entries = (history.body as { entries: Array<{ type: string; amount: number; balance_after: number }> }).entries;
      expect(entries.map((e) => [e.type, e.amount, e.balance_after])).toEqual([["refund", -55, 0], ["bonus", 5, 55], ["purchase", 50, 50]]);
      const credits = await call(server, "GET", "/api/billing/credits", { cookie: user.cookie });
      expect(credits.body).toEqual({ balance: 0, currency: "USD" });
    });

    it("a full refund while a request holds part of the credits takes what the hold gives back once the request ends", async () => {
      const userId = newUser();
      const intent = await paidAndGranted(userId, 10);
      const holdId = `${userId}:slow-request`;
      expect((await ctx().ledger.hold(userId, 8 * MICROS, { holdId })).ok).toBe(true);
      expect((await deliver(server, refundEvent(intent, 1000))).status).toBe(200);
      expect(await refundEntries(userId)).toEqual([{ amount: -2 * MICROS, shortfall: 8 * MICROS }]);
      // the request ends charging 3 of the 8 it held: the other 5 were refunded and are taken, not left to spend
      await ctx().ledger.settle(userId, holdId, 3 * MICROS);
      await vi.waitFor(async () => expect(await refundEntries(userId)).toEqual([{ amount: -5 * MICROS, shortfall: 0 }, { amount: -2 * MICROS, shortfall: 8 * MICROS }]));
      await expectBalance(userId, 0);
      expect((await ctx().ledger.verify(userId)).ok).toBe(true);
    });

    it("a full refund leaves nothing to spend when a request reserves credits between its give-back and its entry", async () => {
      const userId = newUser();
      const intent = await paidAndGranted(userId, 10);
      // The refund's entry is written only once a request that needs a top-up has come in: before the fix, that top-up
      // reserved a chunk of the balance the give-back had just restored, the refund took only the rest, and the chunk
      // went back to the balance once the request ended, left to spend.
      let request: Promise<unknown> | undefined;
      const append = ChainWriter.prototype.append;
      const spy = vi.spyOn(ChainWriter.prototype, "append").mockImplementation(async function (this: ChainWriter, id, movement) {
        if (movement.kind === "refund" && !request) {
          request = ctx().ledger.hold(userId, 1 * MICROS, { holdId: `${userId}:late-request` });
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        return append.call(this, id, movement);
      });
      try {
        expect((await deliver(server, refundEvent(intent, 1000))).status).toBe(200);
      } finally {
        spy.mockRestore();
      }
      expect(await request).toMatchObject({ ok: false });
      expect(await refundEntries(userId)).toEqual([{ amount: -10 * MICROS, shortfall: 0 }]);
      await ctx().ledger.flush();
      await expectBalance(userId, 0);
      expect((await ctx().ledger.verify(userId)).ok).toBe(true);
    });

    it("partial refunds take back their share of the cumulative refunded amount and add up to the whole grant", async () => {
      const userId = newUser();
      const intent = await paidAndGranted(userId, 100); // 100 + 15 bonus
      expect((await deliver(server, refundEvent(intent, 2_500))).status).toBe(200);
      await expectBalance(userId, 86.25 * MICROS);
      expect((await deliver(server, refundEvent(intent, 6_000))).status).toBe(200);
      await expectBalance(userId, 46 * MICROS);
      expect((await deliver(server, refundEvent(intent, 10_000))).status).toBe(200);
      await expectBalance(userId, 0);
      expect(await refundEntries(userId)).toEqual([
        { amount: -46 * MICROS, shortfall: 0 }, { amount: -40.25 * MICROS, shortfall: 0 }, { amount: -28.75 * MICROS, shortfall: 0 },
      ]);
    });

    it("an older event after a newer one changes nothing; a newer one takes only the difference", async () => {
      const userId = newUser();
      const intent = await paidAndGranted(userId, 10);
      const older = refundEvent(intent, 300);
      const newer = refundEvent(intent, 600);
      expect((await deliver(server, newer)).status).toBe(200);
      await expectBalance(userId, 4 * MICROS);
      expect((await deliver(server, older)).status).toBe(200);
      await expectBalance(userId, 4 * MICROS);
      expect((await deliver(server, refundEvent(intent, 1_000))).status).toBe(200);
      await expectBalance(userId, 0);
      expect(await refundEntries(userId)).toEqual([{ amount: -4 * MICROS, shortfall: 0 }, { amount: -6 * MICROS, shortfall: 0 }]);
    });

    it("takes each share once when several refund events of one charge arrive concurrently, twice each", async () => {
      const userId = newUser();
      const other = await paidAndGranted(userId, 12.34); // stays: only the refunded payment's credits go
      const intent = await paidAndGranted(userId, 100);
      await expectBalance(userId, (12.34 + 115) * MICROS);
      const events = [3_000, 6_000, 10_000, 6_000].map((cents) => refundEvent(intent, cents));
      const statuses = await deliverConcurrently(server, [...events, ...events]);
      expect(statuses.every((s) => s === 200)).toBe(true);
      await expectBalance(userId, 12.34 * MICROS);
      const taken = (await refundEntries(userId)).reduce((sum, e) => sum - e.amount, 0);
      expect(taken).toBe(115 * MICROS);
      expect(other.id).not.toBe(intent.id);
    });

    it("a refund after the credits were spent takes what is left (balance 0) and records the shortfall", async () => {
      const userId = newUser();
      const intent = await paidAndGranted(userId, 10);
      // a request spends 3 USD (the unused rest of the instance's reservation, while it has one, is taken too: see the
      // ledger's unit tests)
      const holdId = `h_${newId("x")}`;
      expect((await ctx().ledger.hold(userId, 3 * MICROS, { holdId })).ok).toBe(true);
      expect(await ctx().ledger.settle(userId, holdId, 3 * MICROS, { model: "test" })).toBe(3 * MICROS);
      expect(await ctx().ledger.balance(userId)).toBe(7 * MICROS);
      expect((await deliver(server, refundEvent(intent, 1_000))).status).toBe(200);
      await expectBalance(userId, 0);
      expect(await refundEntries(userId)).toEqual([{ amount: -7 * MICROS, shortfall: 3 * MICROS }]);
    });

    it("a refund of a payment intent the gateway does not know changes nothing and answers 200", async () => {
      const userId = newUser();
      await paidAndGranted(userId, 10);
      const stranger = { id: `pi_unknown_${newId("x")}`, amount: 5000 };
      const res = await deliver(server, refundEvent(stranger, 5000));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true });
      await expectBalance(userId, 10 * MICROS);
      expect(await refundEntries(userId)).toEqual([]);
      for (const odd of [{ payment_intent: { $ne: null } }, { amount: -5 }, { amount_refunded: "all" }, { invoice: { id: { $ne: null } } }]) {
        const oddRes = await deliver(server, stripeEvent("charge.refunded", { ...refundedCharge(stranger, 5000), ...odd }));
        expect(oddRes.status).toBe(200);
      }
      await expectBalance(userId, 10 * MICROS);
    });

    it("a refund that arrives before its payment's event grants first, so the later event gives nothing", async () => {
      const userId = newUser();
      const intent = await paidIntent(userId, 50);
      expect((await deliver(server, refundEvent(intent, 5000))).status).toBe(200);
      await expectBalance(userId, 0);
      expect((await deliver(server, stripeEvent("payment_intent.succeeded", intent))).status).toBe(200);
      await expectBalance(userId, 0);
      expect((await ctx().ledger.entries(userId)).map((e) => [e.kind, e.amount])).toEqual([
        ["refund", -55 * MICROS], ["bonus", 5 * MICROS], ["purchase", 50 * MICROS],
      ]);
    });

    it("a refunded invoice takes back its share of the plan credits", async () => {
      const userId = newUser();
      const view = await ctx().billing.createSubscription(userId, { plan_id: "team", payment_method_id: "pm_card_visa" });
      const sub = fake.objects.get(view.subscription_id) as Record<string, unknown>;
      const invoiceId = `in_refunded_${newId("x")}`;
      const invoice = { id: invoiceId, object: "invoice", customer: sub.customer, amount_paid: 10_000, currency: "usd", status: "paid",
        parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } } };
      expect((await deliver(server, stripeEvent("invoice.payment_succeeded", invoice))).status).toBe(200);
      await expectBalance(userId, 110 * MICROS);
      const charge = { id: `pi_${invoiceId}`, amount: 10_000 };
      expect((await deliver(server, refundEvent(charge, 5_000, { invoice: invoiceId }))).status).toBe(200);
      await expectBalance(userId, 55 * MICROS);
      expect((await deliver(server, refundEvent(charge, 10_000, { invoice: { id: invoiceId, object: "invoice" } }))).status).toBe(200);
      await expectBalance(userId, 0);
    });

    it("a refund or dispute of an invoice's charge shaped as the current API version (no charge.invoice) finds the invoice through its payment", async () => {
      const user = await verifiedUser(server);
      users.push(user.id);
      const view = await ctx().billing.createSubscription(user.id, { plan_id: "team", payment_method_id: "pm_card_visa" });
      const sub = fake.objects.get(view.subscription_id) as Record<string, unknown>;
      const paid = async (amountPaid: number) => {
        const invoiceId = `in_current_${newId("x")}`;
        const paymentIntentId = `pi_${invoiceId}`;
        fake.objects.set(`inpay_${invoiceId}`, { id: `inpay_${invoiceId}`, object: "invoice_payment", invoice: invoiceId, amount_paid: amountPaid,
          amount_requested: amountPaid, currency: "usd", is_default: true, status: "paid", payment: { type: "payment_intent", payment_intent: paymentIntentId }, livemode: false });
        const invoice = { id: invoiceId, object: "invoice", customer: sub.customer, amount_paid: amountPaid, currency: "usd", status: "paid",
          parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } } };
        expect((await deliver(server, stripeEvent("invoice.paid", invoice))).status).toBe(200);
        return { id: paymentIntentId, amount: amountPaid };
      };
      const refunded = await paid(10_000);
      await expectBalance(user.id, 110 * MICROS);
      expect((await deliver(server, refundEvent(refunded, 2_500))).status).toBe(200);
      await expectBalance(user.id, 82.5 * MICROS);
      const disputed = await paid(10_000);
      await expectBalance(user.id, 192.5 * MICROS);
      // the dispute names its charge by id only (not expanded): the invoice payment gives the charged amount
      const dp = { id: `dp_${newId("x")}`, object: "dispute", amount: 5_000, currency: "usd", charge: `ch_${disputed.id}`, payment_intent: disputed.id,
        status: "needs_response", reason: "fraudulent", balance_transactions: [], metadata: {} };
      const res = await deliver(server, stripeEvent("charge.dispute.funds_withdrawn", dp));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true });
      await expectBalance(user.id, 137.5 * MICROS);
      const history = await call(server, "GET", "/api/billing/history", { cookie: user.cookie });
      const entries = (history.body as { entries: Array<{ type: string; amount: number }> }).entries;
      expect(entries.slice(0, 4).map((e) => [e.type, e.amount])).toEqual([["dispute", -55], ["plan_credits", 110], ["refund", -27.5], ["plan_credits", 110]]);
    });
  });

  describe("charge.dispute.funds_withdrawn / funds_reinstated", () => {
    const dispute = (intent: Record<string, unknown>, amount: number, extra: Record<string, unknown> = {}) => ({
      id: `dp_${newId("x")}`, object: "dispute", amount, currency: "usd", charge: `ch_${String(intent.id)}`, payment_intent: intent.id,
      status: "needs_response", metadata: {}, ...extra,
    });

    it("a withdrawal takes back the disputed share once; the reinstatement gives it back once", async () => {
      const user = await verifiedUser(server);
      users.push(user.id);
      const intent = await paidAndGranted(user.id, 50);
      await paidAndGranted(user.id, 10);
      const dp = dispute(intent, 5000);
      const withdrawn = stripeEvent("charge.dispute.funds_withdrawn", dp);
      expect(await deliverConcurrently(server, [withdrawn, withdrawn, stripeEvent("charge.dispute.funds_withdrawn", dp)])).toEqual([200, 200, 200]);
      await expectBalance(user.id, 10 * MICROS);
      const reinstated = stripeEvent("charge.dispute.funds_reinstated", { ...dp, status: "won" });
      expect(await deliverConcurrently(server, [reinstated, stripeEvent("charge.dispute.funds_reinstated", { ...dp, status: "won" })])).toEqual([200, 200]);
      await expectBalance(user.id, 65 * MICROS);
      expect((await deliver(server, stripeEvent("charge.dispute.funds_withdrawn", dp))).status).toBe(200);
      await expectBalance(user.id, 65 * MICROS);
      const history = await call(server, "GET", "/api/billing/history", { cookie: user.cookie });
      const entries = (history.body as { entries: Array<{ type: string; amount: number }> }).entries;
      expect(entries.slice(0, 2).map((e) => [e.type, e.amount])).toEqual([["dispute", 55], ["dispute", -55]]);
    });

    it("a partial dispute after the credits were spent takes what is left; the reinstatement gives back only that", async () => {
      const userId = newUser();
      const intent = await paidAndGranted(userId, 100); // 115 granted
      const holdId = `h_${newId("x")}`;
      expect((await ctx().ledger.hold(userId, 100 * MICROS, { holdId })).ok).toBe(true);
      expect(await ctx().ledger.settle(userId, holdId, 100 * MICROS, { model: "test" })).toBe(100 * MICROS);
      const dp = dispute(intent, 4000, { charge: { id: `ch_${String(intent.id)}`, object: "charge", amount: 10_000, payment_intent: intent.id } });
      expect((await deliver(server, stripeEvent("charge.dispute.funds_withdrawn", dp))).status).toBe(200);
      await expectBalance(userId, 0);
      const [taken] = await ctx().ledger.entries(userId, { kinds: ["dispute"] });
      expect([taken?.amount, taken?.meta?.shortfall]).toEqual([-15 * MICROS, 31 * MICROS]);
      expect((await deliver(server, stripeEvent("charge.dispute.funds_reinstated", dp))).status).toBe(200);
      await expectBalance(userId, 15 * MICROS);
    });

    it("a withdrawal and its reinstatement delivered at the same time leave the credits whole, each dispute once", async () => {
      const userId = newUser();
      const intent = await paidAndGranted(userId, 100); // 115 granted
      const disputes = Array.from({ length: 15 }, () => dispute(intent, 500));
      const events = disputes.flatMap((dp) => [stripeEvent("charge.dispute.funds_withdrawn", dp), stripeEvent("charge.dispute.funds_reinstated", { ...dp, status: "won" })]);
      // each pair sent side by side, so that the two of a dispute overlap
      expect((await Promise.all(events.map((e) => deliver(server, e)))).map((r) => r.status)).toEqual(events.map(() => 200));
      await expectBalance(userId, 115 * MICROS);
      const net = (await ctx().ledger.entries(userId, { kinds: ["dispute"] })).reduce((sum, e) => sum + e.amount, 0);
      expect(net).toBe(0);
    });

    it("a reinstatement that arrives before its withdrawal leaves the withdrawal nothing to take; an unknown payment changes nothing", async () => {
      const userId = newUser();
      const intent = await paidAndGranted(userId, 10);
      const dp = dispute(intent, 1000);
      expect((await deliver(server, stripeEvent("charge.dispute.funds_reinstated", dp))).status).toBe(200);
      expect((await deliver(server, stripeEvent("charge.dispute.funds_withdrawn", dp))).status).toBe(200);
      await expectBalance(userId, 10 * MICROS);
      const res = await deliver(server, stripeEvent("charge.dispute.funds_withdrawn", dispute({ id: `pi_unknown_${newId("x")}` }, 1000)));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true });
      await expectBalance(userId, 10 * MICROS);
    });
  });

  it("answers a signed payload that is not an event 400 invalid_parameter, and odd fields of a signed event 200 ignored, never 500", async () => {
    const user = await verifiedUser(server);
    users.push(user.id);
    const notEvents = [
      "[]",
      // signed, but not JSON at all: the signature is right, the body is what is wrong
      "not json",
      "",
      "null",
      JSON.stringify({ ...stripeEvent("payment_intent.succeeded", {}), id: undefined }),
      JSON.stringify({ ...stripeEvent("payment_intent.succeeded", {}), id: { $ne: null } }),
      JSON.stringify({ ...stripeEvent("payment_intent.succeeded", {}), type: 7 }),
      JSON.stringify({ ...stripeEvent("payment_intent.succeeded", {}), data: null }),
      JSON.stringify({ ...stripeEvent("invoice.payment_succeeded", {}), data: {} }),
      JSON.stringify(stripeEvent("customer.subscription.updated", null as unknown as Record<string, unknown>)),
    ];
    for (const payload of notEvents) {
      const res = await deliver(server, {}, { payload, signature: (await import("stripe")).default.webhooks.generateTestHeaderString({ payload, secret: "whsec_test_secret" }) });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: { message: "Invalid parameter 'body': must be a Stripe event with an id, a type and a data object.", type: "invalid_request_error", code: "invalid_parameter" },
      });
    }
    const intent = { id: `pi_odd_${newId("x")}`, object: "payment_intent", currency: "usd", status: "succeeded" };
    for (const odd of [
      { ...intent, amount: 5000, metadata: { user_id: { $ne: null } } },
      { ...intent, amount: 5000, metadata: { purchase_id: { $ne: null }, user_id: [user.id] } },
      { ...intent, amount: 1e15, amount_received: 1e15, metadata: { user_id: user.id } },
    ]) {
      const res = await deliver(server, stripeEvent("payment_intent.succeeded", odd));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true });
    }
    expect(await ctx().ledger.balance(user.id)).toBe(0);

    // ids that are not strings, lists that are not arrays, a time that is not a number: 200 ignored, not 500
    const meta = { user_id: user.id, plan_id: "pro" };
    for (const event of [
      stripeEvent("payment_intent.succeeded", { ...intent, id: { $ne: null }, amount: 5000, metadata: {} }),
      stripeEvent("customer.subscription.updated", { id: { $ne: null }, object: "subscription", status: "active", metadata: meta }),
      stripeEvent("customer.subscription.created", { id: `sub_odd_${newId("x")}`, object: "subscription", status: "active", metadata: meta, items: { data: [{ price: { id: { $gt: "" } } }] } }),
      { ...stripeEvent("customer.subscription.updated", { id: `sub_odd_${newId("x")}`, object: "subscription", status: "active", metadata: meta }), created: "soon" },
      stripeEvent("invoice.payment_succeeded", { id: `in_odd_${newId("x")}`, object: "invoice", subscription: { id: { $ne: null } } }),
      stripeEvent("invoice.payment_succeeded", { id: `in_odd_${newId("x")}`, object: "invoice", subscription: "sub_odd", lines: { data: "x" } }),
    ]) {
      const res = await deliver(server, event);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true });
    }
  });

  it("keeps a subscription whose flag or times are not Stripe's booleans and seconds readable: 200 to the event, 200 to the subscription", async () => {
    const t = nowSeconds();
    const subscribedWith = async (fields: Record<string, unknown>, created = t) => {
      const user = await verifiedUser(server);
      users.push(user.id);
      const sub = { id: `sub_odd_${newId("x")}`, object: "subscription", status: "active", customer: `cus_odd_${newId("x")}`,
        metadata: { user_id: user.id, plan_id: "pro" }, cancel_at_period_end: false, current_period_start: t, current_period_end: t + 30 * 86_400,
        items: { object: "list", data: [] }, ...fields };
      const res = await deliver(server, { ...stripeEvent("customer.subscription.created", sub), created });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ received: true });
      const view = await call(server, "GET", "/api/billing/subscription", { cookie: user.cookie });
      expect(view.status).toBe(200);
      return view.body as { subscription: { cancel_at_period_end: boolean; current_period_start: string; current_period_end: string } | null };
    };
    expect((await subscribedWith({ cancel_at_period_end: "maybe" })).subscription?.cancel_at_period_end).toBe(false);
    const start = new Date(t * 1000).toISOString();
    for (const times of [{ current_period_start: 1e20, current_period_end: 1e21 }, { current_period_start: -1e15, current_period_end: 2.5 }]) {
      expect((await subscribedWith(times)).subscription).toMatchObject({ current_period_start: start, current_period_end: expect.stringMatching(/^\d{4}-/) });
    }
    expect((await subscribedWith({ current_period_start: undefined, current_period_end: undefined }, 8e15)).subscription).toBeNull();
    // an event time in milliseconds by mistake is still a time: the event is processed
    expect((await subscribedWith({}, Date.now())).subscription).toMatchObject({ current_period_start: start });
  });

  it("answers 200 and ignores unknown event types", async () => {
    const res = await deliver(server, stripeEvent("charge.refund.updated", { id: "re_1", object: "refund" }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true });
  });
});

describe("POST /api/billing/webhook without STRIPE_WEBHOOK_SECRET", () => {
  it("is 503 service_unavailable in the status form of the /api REST routes", async () => {
    const server = await startTestServer({ env: { STRIPE_WEBHOOK_SECRET: "" } });
    try {
      const res = await deliver(server, stripeEvent("payment_intent.succeeded", { id: "pi_1", object: "payment_intent" }));
      expect(res.status).toBe(503);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(await res.json()).toEqual({ status: "error", message: "The payment webhook is not configured on this server.", error_code: "service_unavailable" });
    } finally {
      await server.close();
    }
  });
});
