// Refunds and disputes delivered before, between or after the events that grant the payment's credits, each
// delivered twice: the outcome is the same in every order (CONTRACT 6: out-of-order safe, balance never below zero).
import { describe, expect, it } from "vitest";
import { newId } from "@gw/shared";
import type { FakeStripe } from "@gw/test-support";
import { deliver, stripeEvent, webhookStand } from "./billing-support";
import type { TestServer } from "./harness";

const MICROS = 1_000_000;
type Json = Record<string, unknown>;

/** A paid money object as Stripe would report it, not announced to the gateway yet. */
interface Paid {
  userId: string;
  /** what its grant is: credits (+ bonus) or plan credits, micro-dollars */
  grantedMicros: number;
  /** every event that announces the payment (each would grant it) */
  grants: Json[];
  /** its charge after refunds of `refundedCents` in all (cumulative) */
  charge(refundedCents: number): Json;
  /** a dispute of `cents` of it, naming its charge as Stripe does for this kind */
  dispute(cents: number): Json;
}

describe("POST /api/billing/webhook: refunds and disputes in any order with the payment's events", () => {
  let server: TestServer;
  let fake: FakeStripe;
  const { newUser } = webhookStand((s, f) => {
    server = s;
    fake = f;
  });
  const ctx = () => server.app.context;

  const chargeOf = (paymentIntentId: string, extra: Json = {}) => (refunded: number): Json => ({
    id: `ch_${paymentIntentId}`, object: "charge", amount: 10_000, amount_refunded: refunded, currency: "usd", paid: true,
    status: "succeeded", refunded: refunded === 10_000, payment_intent: paymentIntentId, metadata: {}, ...extra,
  });
  const disputeOf = (paymentIntentId: string, charge: unknown) => (cents: number): Json => ({
    id: `dp_${newId("x")}`, object: "dispute", amount: cents, currency: "usd", charge, payment_intent: paymentIntentId,
    status: "needs_response", reason: "fraudulent", metadata: {},
  });

  /** Stores the payment intent at the fake as paid, and returns it. */
  function succeeded(id: string, metadata: unknown): Json {
    const intent = { ...fake.objects.get(id), id, object: "payment_intent", amount: 10_000, amount_received: 10_000, currency: "usd", status: "succeeded", metadata };
    fake.objects.set(id, intent);
    return intent;
  }

  /** $100 bought with create-payment-intent: 100 + 15 bonus. */
  async function intentPurchase(): Promise<Paid> {
    const userId = newUser();
    const created = await ctx().billing.createPaymentIntent(userId, { amount: 100 });
    const intent = succeeded(created.payment_intent_id, fake.objects.get(created.payment_intent_id)?.metadata);
    return {
      userId, grantedMicros: 115 * MICROS, grants: [stripeEvent("payment_intent.succeeded", intent)],
      charge: chargeOf(created.payment_intent_id), dispute: disputeOf(created.payment_intent_id, `ch_${created.payment_intent_id}`),
    };
  }

  /** $100 bought through checkout: the gateway learns the payment intent's id from the payment's events only. */
  async function checkoutPurchase(): Promise<Paid> {
    const userId = newUser();
    const session = await ctx().billing.createCheckoutSession(userId, {
      type: "credits", amount: 100, success_url: "https://example.com/ok", cancel_url: "https://example.com/no",
    });
    const stored = fake.objects.get(session.session_id) as Json;
    const intentId = `pi_checkout_${newId("x")}`;
    const intent = succeeded(intentId, (stored.payment_intent_data as Json).metadata);
    const completed = { ...stored, status: "complete", payment_status: "paid", payment_intent: intentId };
    return {
      userId, grantedMicros: 115 * MICROS,
      grants: [stripeEvent("checkout.session.completed", completed), stripeEvent("payment_intent.succeeded", intent)],
      charge: chargeOf(intentId), dispute: disputeOf(intentId, `ch_${intentId}`),
    };
  }

  /**
   * A paid $100 invoice of a team subscription (110 USD of plan credits). In the older API shape the charge names
   * the invoice (and a dispute carries its charge expanded); in the current one only an invoice payment links them.
   */
  async function invoice(shape: "charge names it" | "current API"): Promise<Paid> {
    const userId = newUser();
    const view = await ctx().billing.createSubscription(userId, { plan_id: "team", payment_method_id: "pm_card_visa" });
    const sub = fake.objects.get(view.subscription_id) as Json;
    const invoiceId = `in_${newId("x")}`;
    const intentId = `pi_${invoiceId}`;
    const inv = { id: invoiceId, object: "invoice", customer: sub.customer, amount_paid: 10_000, amount_due: 10_000, currency: "usd", status: "paid",
      parent: { type: "subscription_details", subscription_details: { subscription: sub.id, metadata: sub.metadata } } };
    fake.objects.set(invoiceId, inv);
    const grants = [stripeEvent("invoice.paid", inv), stripeEvent("invoice.payment_succeeded", inv)];
    if (shape === "charge names it") {
      const charge = chargeOf(intentId, { invoice: invoiceId });
      return { userId, grantedMicros: 110 * MICROS, grants, charge, dispute: disputeOf(intentId, charge(0)) };
    }
    fake.objects.set(`inpay_${invoiceId}`, { id: `inpay_${invoiceId}`, object: "invoice_payment", invoice: invoiceId, amount_paid: 10_000,
      amount_requested: 10_000, currency: "usd", is_default: true, status: "paid", payment: { type: "payment_intent", payment_intent: intentId }, livemode: false });
    return { userId, grantedMicros: 110 * MICROS, grants, charge: chargeOf(intentId), dispute: disputeOf(intentId, `ch_${intentId}`) };
  }

  const kinds: Array<[string, () => Promise<Paid>]> = [
    ["a payment intent's purchase", intentPurchase],
    ["a checkout's purchase", checkoutPurchase],
    ["an invoice its charge names", () => invoice("charge names it")],
    ["an invoice found through its payment", () => invoice("current API")],
  ];

  /** Every order of the given steps. */
  function orders<T>(steps: T[]): T[][] {
    if (steps.length <= 1) return [steps];
    return steps.flatMap((step, i) => orders([...steps.slice(0, i), ...steps.slice(i + 1)]).map((rest) => [step, ...rest]));
  }

  /** Delivers each event of each step twice, in order (a redelivery right after each), all answered 200. */
  async function deliverTwice(steps: Json[][]): Promise<void> {
    for (const events of steps) {
      for (const event of [...events, ...events]) expect((await deliver(server, event)).status).toBe(200);
    }
  }

  /** The exact balance, equal to the ledger's sum (the whole ledger's chains are verified once, after all). */
  async function expectBalance(userId: string, micros: number): Promise<void> {
    const entries = await ctx().ledger.entries(userId, { limit: 10_000 });
    expect(entries.reduce((sum, e) => sum + e.amount, 0)).toBe(micros);
    expect(await ctx().ledger.balance(userId)).toBe(micros);
  }

  /** The kinds of the user's ledger entries, sorted: a grant's entries must appear once each. */
  async function entryKinds(userId: string): Promise<string[]> {
    return (await ctx().ledger.entries(userId)).map((e) => e.kind).sort();
  }
  /** `percent` % of the grant (exact: both grants are whole dollars). */
  const share = (paid: Paid, percent: number) => (paid.grantedMicros * percent) / 100;
  const grantKinds = (paid: Paid) => (paid.grantedMicros === 115 * MICROS ? ["bonus", "purchase"] : ["plan_credits"]);

  describe.each(kinds)("%s", (_name, make) => {
    it("a partial refund takes back its share whether it comes before or after the grant, each event delivered twice", async () => {
      for (const order of orders(["grant", "refund"] as const)) {
        const paid = await make();
        await deliverTwice(order.map((step) => (step === "grant" ? paid.grants : [stripeEvent("charge.refunded", paid.charge(2_500))])));
        // 25 % of the grant is taken back exactly once
        await expectBalance(paid.userId, share(paid, 75));
        expect(await entryKinds(paid.userId)).toEqual([...grantKinds(paid), "refund"].sort());
      }
    });

    it("partial then full refunds and the grant, in every order and each twice, take back the whole grant and no more", async () => {
      for (const order of orders(["grant", "partial", "full"] as const)) {
        const paid = await make();
        await deliverTwice(order.map((step) => {
          if (step === "grant") return paid.grants;
          return [stripeEvent("charge.refunded", paid.charge(step === "partial" ? 2_500 : 10_000))];
        }));
        await expectBalance(paid.userId, 0);
        const refunds = await ctx().ledger.entries(paid.userId, { kinds: ["refund"] });
        expect(refunds.reduce((sum, e) => sum + e.amount, 0)).toBe(-paid.grantedMicros);
        // the partial refund is its own step only when it came before the full one
        const partialFirst = order.indexOf("partial") < order.indexOf("full");
        expect(refunds.map((e) => e.amount)).toEqual(partialFirst
          ? [-share(paid, 75), -share(paid, 25)]
          : [-paid.grantedMicros]);
        expect((await entryKinds(paid.userId)).filter((k) => k !== "refund")).toEqual(grantKinds(paid));
      }
    });

    it("a dispute's withdrawal takes its share before or after the grant, and its reinstatement, in any order, gives it back", async () => {
      for (const order of orders(["grant", "withdrawn"] as const)) {
        const paid = await make();
        const dp = paid.dispute(4_000);
        await deliverTwice(order.map((step) => (step === "grant" ? paid.grants : [stripeEvent("charge.dispute.funds_withdrawn", dp)])));
        await expectBalance(paid.userId, share(paid, 60));
        await deliverTwice([[stripeEvent("charge.dispute.funds_reinstated", { ...dp, status: "won" })]]);
        await expectBalance(paid.userId, paid.grantedMicros);
      }
      for (const order of orders(["grant", "withdrawn", "reinstated"] as const)) {
        const paid = await make();
        const dp = paid.dispute(4_000);
        await deliverTwice(order.map((step) => {
          if (step === "grant") return paid.grants;
          return [stripeEvent(`charge.dispute.funds_${step}`, step === "reinstated" ? { ...dp, status: "won" } : dp)];
        }));
        await expectBalance(paid.userId, paid.grantedMicros);
        expect((await entryKinds(paid.userId)).filter((k) => k !== "dispute")).toEqual(grantKinds(paid));
      }
    });

    it("a dispute after a partial refund, both before the grant, takes its share of the grant on top", async () => {
      const paid = await make();
      await deliverTwice([
        [stripeEvent("charge.refunded", paid.charge(2_500))],
        [stripeEvent("charge.dispute.funds_withdrawn", paid.dispute(4_000))],
        paid.grants,
      ]);
      await expectBalance(paid.userId, share(paid, 35));
    });
  });

  it("a refund or dispute of a payment intent or invoice the processor does not know either changes nothing and answers 200", async () => {
    const userId = newUser();
    const stranger = `pi_unknown_${newId("x")}`;
    const res = await deliver(server, stripeEvent("charge.refunded", chargeOf(stranger)(10_000)));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true });
    const disputed = await deliver(server, stripeEvent("charge.dispute.funds_withdrawn", disputeOf(stranger, `ch_${stranger}`)(10_000)));
    expect(disputed.status).toBe(200);
    const unknownInvoice = await deliver(server, stripeEvent("charge.refunded", chargeOf(stranger, { invoice: `in_unknown_${newId("x")}` })(10_000)));
    expect(unknownInvoice.status).toBe(200);
    await expectBalance(userId, 0);
  });

  it("a refund event of a charge that is not paid neither grants nor takes anything", async () => {
    const paid = await intentPurchase();
    expect((await deliver(server, stripeEvent("charge.refunded", { ...paid.charge(2_500), paid: false }))).status).toBe(200);
    await expectBalance(paid.userId, 0);
    await deliverTwice([paid.grants]);
    await expectBalance(paid.userId, paid.grantedMicros);
  });
});
