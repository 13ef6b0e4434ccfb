// CONTRACT 12: GET /api/admin/overview over real HTTP, its figures exact for known traffic: credit purchases and a
// refund (revenue by day), admin adjustments (credits granted and taken back), charged requests by model, top accounts.
import { startFakeUpstreams, type FakeUpstreams } from "@gw/test-support";
import { DEFAULT_PLANS } from "@gw/config";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { call, login, RELAXED_LIMITS, uniqueEmail, verifiedUser } from "./auth-helpers";
import { startTestServer, type TestServer } from "./harness";
import { balanceMicros, postJson, readJson } from "./support/gateway-fixtures";

let fakes: FakeUpstreams;
let server: TestServer;
const ADMIN_EMAIL = uniqueEmail("admin");

beforeAll(async () => {
  fakes = await startFakeUpstreams();
  const plans = DEFAULT_PLANS.map((p) => (p.id === "free" ? { ...p, requestsPerMinute: 100_000, concurrentRequests: 1_000 } : p));
  server = await startTestServer({ env: { ...RELAXED_LIMITS, ...fakes.env, ADMIN_EMAILS: ADMIN_EMAIL }, config: { plans } });
});

afterAll(async () => {
  await server?.close();
  await fakes?.close();
});

describe("GET /api/admin/overview", () => {
  it("revenue by day, credits granted against consumed, requests by model and top accounts, exact", async () => {
    const admin = await verifiedUser(server, ADMIN_EMAIL);
    const big = await verifiedUser(server, uniqueEmail("big"));
    const small = await verifiedUser(server, uniqueEmail("small"));
    const ledger = server.app.context.ledger;
    // a $50 purchase (+ $5 bonus) by big, refunded $10 of it; a $10 purchase by small; as the webhook grants them
    await ledger.credit(big.id, 50_000_000, { kind: "purchase", idempotencyKey: "purchase:p1", meta: { purchaseId: "p1", amountCents: 5_000 } });
    await ledger.credit(big.id, 5_000_000, { kind: "bonus", idempotencyKey: "purchase:p1:bonus", meta: { purchaseId: "p1", amountCents: 5_000 } });
    await ledger.credit(small.id, 10_000_000, { kind: "purchase", idempotencyKey: "purchase:p2", meta: { purchaseId: "p2", amountCents: 1_000 } });
    await ledger.debit(big.id, 10_000_000, { kind: "refund", idempotencyKey: "purchase:p1:refund:0", meta: { grant: "purchase:p1", refundedCents: 1_000, fromCents: 0, amountCents: 5_000 } });
    // an admin adjustment of +$2 and one of -$1
    expect((await call(server, "POST", `/api/admin/users/${small.id}/credits`, { cookie: admin.cookie, body: { amount: 2, reason: "goodwill" } })).status).toBe(200);
    expect((await call(server, "POST", `/api/admin/users/${small.id}/credits`, { cookie: admin.cookie, body: { amount: -1, reason: "correction" } })).status).toBe(200);

    const keyOf = async (cookie: string) => (await call(server, "POST", "/api/keys", { cookie, body: { name: "k" } })).body.key as string;
    const [bigKey, smallKey] = await Promise.all([keyOf(big.cookie), keyOf(small.cookie)]);
    const before = { big: await balanceMicros(server, big.id), small: await balanceMicros(server, small.id) };
    const send = async (key: string, model: string) => {
      const res = await postJson(server, "/v1/chat/completions", key, { model, messages: [{ role: "user", content: "hi" }], max_tokens: 20 });
      expect(res.status).toBe(200);
      await readJson(res);
    };
    for (let i = 0; i < 3; i++) await send(bigKey, "textA-4");
    await send(bigKey, "textB-3-haiku");
    await send(smallKey, "textA-4");
    await ledger.flush();
    const spent = { big: before.big - (await balanceMicros(server, big.id)), small: before.small - (await balanceMicros(server, small.id)) };

    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const today = new Date().toISOString().slice(0, 10);
    await vi.waitFor(async () => {
      const res = await call(server, "GET", `/api/admin/overview?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, { cookie: admin.cookie });
      expect(res.status).toBe(200);
      const o = res.body;
      expect(o.revenue).toEqual({ payments: 60, refunds: 10, net: 50, by_day: [{ day: today, payments: 60, refunds: 10, net: 50 }] });
      const consumed = (spent.big + spent.small) / 1e6;
      expect(o.credits).toEqual({ granted: 67, taken_back: 11, consumed });
      expect(o.models.map((m: { model: string; requests: number; errors: number }) => [m.model, m.requests, m.errors])).toEqual([["textA-4", 4, 0], ["textB-3-haiku", 1, 0]]);
      expect(o.top_accounts).toEqual([
        { user_id: big.id, email: big.email, spend: spent.big / 1e6, requests: 4 },
        { user_id: small.id, email: small.email, spend: spent.small / 1e6, requests: 1 },
      ]);
    }, { timeout: 10_000, interval: 200 });
  });

  it("a range that is reversed or longer than 92 days: 400 naming `from`; a customer: 403 admin_required", async () => {
    const customer = await verifiedUser(server, uniqueEmail("customer"));
    expect((await call(server, "GET", "/api/admin/overview", { cookie: customer.cookie })).body.error.code).toBe("admin_required");
    const cookie = await login(server, ADMIN_EMAIL);
    for (const [from, to] of [["2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z"], ["2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z"]]) {
      const res = await call(server, "GET", `/api/admin/overview?from=${from}&to=${to}`, { cookie });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_parameter" });
      expect(res.body.error.message).toContain("from");
    }
  });
});
