// The console's per-account views (user list row, user detail, the user's ledger) read the ledger, keys and billing
// collections by `_id` only: their 30-day spend comes from the usage totals (the user's chain), and equals a
// brute-force sum over the ledger.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEDGER_COLLECTION, type StoredUsage } from "@gw/billing";
import { microsToDollars } from "@gw/shared";
import { filtersSent } from "@gw/test-support";
import { call, RELAXED_LIMITS, uniqueEmail, verifiedUser } from "./auth-helpers";
import { expectLedgerConsistent } from "./billing-support";
import { startTestServer, type TestServer } from "./harness";

const DAY_MS = 86_400_000;
const ADMIN_EMAIL = uniqueEmail("admin");

let server: TestServer;
let admin: { email: string; cookie: string; id: string };
let customer: { email: string; cookie: string; id: string };
let other: { email: string; cookie: string; id: string };

/** Requests of one account, settled now (some of another model, some with no usage record). */
async function requests(userId: string, round: number, count: number): Promise<void> {
  const { ledger } = server.app.context;
  for (let i = 0; i < count; i++) {
    const holdId = `h-${userId}-${round}-${i}`;
    await ledger.hold(userId, 5_000, { holdId });
    const meta: StoredUsage = {
      requestId: `req-${round}-${i}`, endpoint: "/v1/chat/completions", model: i % 3 === 0 ? "model-b" : "model-a", type: "text",
      promptTokens: 10, completionTokens: i, processingMs: 5, outputBytes: 10, createdAt: new Date(server.clock.now()),
    };
    await ledger.settle(userId, holdId, 1_000 + 37 * i + round, meta);
  }
}

beforeAll(async () => {
  server = await startTestServer({ env: { ...RELAXED_LIMITS, ADMIN_EMAILS: ADMIN_EMAIL } });
  customer = await verifiedUser(server, uniqueEmail("customer"));
  other = await verifiedUser(server, uniqueEmail("other"));
  const { ledger } = server.app.context;
  // a purchase whose receipt the ledger view looks up
  for (const user of [customer, other]) {
    await ledger.credit(user.id, 100_000_000, { kind: "purchase", idempotencyKey: `buy-${user.id}`, meta: { purchaseId: `pur_${user.id}` } });
  }
  await server.app.context.apiKeys.create(customer.id, { name: "k" });
  // older than 30 days, then four days of requests (another account's in between)
  await requests(customer.id, 0, 7);
  server.clock.advance(31 * DAY_MS);
  for (let round = 1; round <= 4; round++) {
    await requests(customer.id, round, 20);
    await requests(other.id, round, 3);
    server.clock.advance(DAY_MS);
  }
  await ledger.flush();
  // signed in after the clock moved on, so that the session is fresh
  admin = await verifiedUser(server, ADMIN_EMAIL);
});

afterAll(async () => {
  if (server) await expectLedgerConsistent(server, [admin.id, customer.id, other.id]);
  await server?.close();
});

/** The collections that grow with accounts and traffic: the ledger's (instance heartbeats aside), keys, billing. */
const PER_ACCOUNT = /^(ledger_(?!instances$)|api_key|billing_)/;

/** The brute force: every settle of the account with a usage record of the last 30 days, by a query over the whole ledger. */
async function bruteForce(userId: string) {
  const since = new Date(server.clock.now() - 30 * DAY_MS);
  const docs = await server.db.connection.collection<{ cost?: number; meta?: StoredUsage }>(LEDGER_COLLECTION)
    .find({ userId, kind: "settle", "meta.createdAt": { $gte: since } }).toArray();
  const byModel = new Map<string, { requests: number; cost: number }>();
  for (const doc of docs) {
    const model = byModel.get(doc.meta?.model ?? "") ?? { requests: 0, cost: 0 };
    model.requests += 1;
    model.cost += doc.cost ?? 0;
    byModel.set(doc.meta?.model ?? "", model);
  }
  const cost = docs.reduce((sum, doc) => sum + (doc.cost ?? 0), 0);
  return {
    requests: docs.length,
    cost: microsToDollars(cost),
    by_model: [...byModel].sort(([x], [y]) => x.localeCompare(y)).map(([model, m]) => ({ model, requests: m.requests, cost: microsToDollars(m.cost) })),
  };
}

describe("the console's account views read the ledger by _id", () => {
  it("user detail, user list and the user's ledger: `_id` equality filters only, and the spend of a brute-force sum", async () => {
    const truth = await bruteForce(customer.id);
    expect(truth.requests).toBe(80);
    const adminCall = (route: string) => call(server, "GET", route, { cookie: admin.cookie });
    // the subscription store's first use chains the snapshots written before the chains existed, once
    expect((await adminCall(`/api/admin/users/${other.id}`)).status).toBe(200);
    // twice: the first reads write the usage summaries, the second reads them
    for (let pass = 0; pass < 2; pass++) {
      const filters = (await filtersSent(async () => {
        const detail = await adminCall(`/api/admin/users/${customer.id}`);
        expect(detail.status).toBe(200);
        expect(detail.body.usage_30d).toEqual(truth);
        expect(detail.body.user.spend_30d).toBe(truth.cost);
        const list = await adminCall(`/api/admin/users?query=${encodeURIComponent(customer.email)}`);
        expect(list.status).toBe(200);
        expect(list.body.users).toEqual([expect.objectContaining({ id: customer.id, spend_30d: truth.cost })]);
        const ledger = await adminCall(`/api/admin/users/${customer.id}/ledger?limit=5`);
        expect(ledger.status).toBe(200);
        expect(ledger.body.entries).toHaveLength(1);
      })).filter((f) => PER_ACCOUNT.test(f.collection));
      for (const collection of [LEDGER_COLLECTION, "api_keys", "billing_purchases"]) expect(filters.some((f) => f.collection === collection)).toBe(true);
      for (const { filter } of filters) {
        expect(Object.keys(filter as object)).toEqual(["_id"]);
        expect(typeof (filter as { _id: unknown })._id).toBe("string");
      }
    }
    const otherDetail = await adminCall(`/api/admin/users/${other.id}`);
    expect(otherDetail.body.usage_30d).toEqual(await bruteForce(other.id));
  });
});
