// Refunds and disputes find a payment's grant and what was taken back for it in the user's own chain, read by `_id`
// only: the embedded FerretDB answers any other ledger filter by reading every user's entries.
import { describe, expect, it } from "vitest";
import { LEDGER_COLLECTION } from "@gw/billing";
import { newId } from "@gw/shared";
import { filtersSent, type FakeStripe } from "@gw/test-support";
import { deliver, stripeEvent, webhookStand } from "./billing-support";
import type { TestServer } from "./harness";

const MICROS = 1_000_000;
type Json = Record<string, unknown>;

describe("POST /api/billing/webhook: ledger reads by _id", () => {
  let server: TestServer;
  let fake: FakeStripe;
  const { newUser } = webhookStand((s, f) => {
    server = s;
    fake = f;
  });
  const ctx = () => server.app.context;

  /** The filters sent to the ledger's collection while `run` runs. */
  async function ledgerFilters(run: () => Promise<unknown>): Promise<unknown[]> {
    return (await filtersSent(run)).filter((s) => s.collection === LEDGER_COLLECTION).map((s) => s.filter);
  }

  const expectReadsById = (filters: unknown[]) => {
    expect(filters.length).toBeGreaterThan(0);
    for (const filter of filters) expect(Object.keys(filter as object)).toEqual(["_id"]);
  };

  const charge = (intentId: string, cents: number, refunded: number, extra: Json = {}): Json => ({
    id: `ch_${intentId}`, object: "charge", amount: cents, amount_refunded: refunded, currency: "usd", paid: true,
    status: "succeeded", refunded: refunded === cents, payment_intent: intentId, metadata: {}, ...extra,
  });

  async function paidAndGranted(userId: string, amount: number): Promise<string> {
    const created = await ctx().billing.createPaymentIntent(userId, { amount });
    const intent = { ...fake.objects.get(created.payment_intent_id), status: "succeeded", amount_received: created.amount };
    expect((await deliver(server, stripeEvent("payment_intent.succeeded", intent))).status).toBe(200);
    return created.payment_intent_id;
  }

  it("a refund and a dispute of one of a user's purchases", async () => {
    const userId = newUser();
    await paidAndGranted(userId, 10);
    const refunded = await paidAndGranted(userId, 50); // 55 with its bonus
    const disputed = await paidAndGranted(userId, 10);
    expect(await ctx().ledger.balance(userId)).toBe(75 * MICROS);
    const dispute = { id: `dp_${newId("x")}`, object: "dispute", amount: 1000, currency: "usd", charge: `ch_${disputed}`, payment_intent: disputed, status: "needs_response", metadata: {} };
    const filters = await ledgerFilters(async () => {
      expect((await deliver(server, stripeEvent("charge.refunded", charge(refunded, 5000, 2500)))).status).toBe(200);
      expect((await deliver(server, stripeEvent("charge.refunded", charge(refunded, 5000, 2500)))).status).toBe(200);
      expect(await ctx().ledger.balance(userId)).toBe(47.5 * MICROS);
      expect((await deliver(server, stripeEvent("charge.dispute.funds_withdrawn", dispute))).status).toBe(200);
      expect(await ctx().ledger.balance(userId)).toBe(37.5 * MICROS);
      expect((await deliver(server, stripeEvent("charge.dispute.funds_reinstated", { ...dispute, status: "won" }))).status).toBe(200);
      expect(await ctx().ledger.balance(userId)).toBe(47.5 * MICROS);
    });
    expectReadsById(filters);
  });

  it("a refund of an invoice's charge naming its customer, and one that arrives before the invoice's paid event", async () => {
    const userId = newUser();
    const view = await ctx().billing.createSubscription(userId, { plan_id: "team", payment_method_id: "pm_card_visa" });
    const sub = fake.objects.get(view.subscription_id) as Json;
    const invoice = (id: string): Json => ({ id, object: "invoice", customer: sub.customer, amount_paid: 10_000, currency: "usd", status: "paid",
      parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } } });
    const paid = invoice(`in_${newId("x")}`);
    expect((await deliver(server, stripeEvent("invoice.paid", paid))).status).toBe(200);
    expect(await ctx().ledger.balance(userId)).toBe(110 * MICROS);
    // the processor knows this one; its paid event has not arrived: the refund grants it first
    const early = invoice(`in_${newId("x")}`);
    fake.objects.set(String(early.id), early);
    const filters = await ledgerFilters(async () => {
      const paidId = String(paid.id);
      expect((await deliver(server, stripeEvent("charge.refunded", charge(`pi_${paidId}`, 10_000, 5_000, { invoice: paidId, customer: sub.customer })))).status).toBe(200);
      expect(await ctx().ledger.balance(userId)).toBe(55 * MICROS);
      const earlyId = String(early.id);
      expect((await deliver(server, stripeEvent("charge.refunded", charge(`pi_${earlyId}`, 10_000, 10_000, { invoice: earlyId })))).status).toBe(200);
      expect(await ctx().ledger.balance(userId)).toBe(55 * MICROS);
    });
    expectReadsById(filters);
    expect((await deliver(server, stripeEvent("invoice.paid", early))).status).toBe(200);
    expect(await ctx().ledger.balance(userId)).toBe(55 * MICROS);
  });
});
