// Helpers shared by the billing and webhook suites: signed Stripe events and ledger invariants.
import Stripe from "stripe";
import { afterAll, beforeAll, expect } from "vitest";
import { newId } from "@gw/shared";
import { startFakeStripe, type FakeStripe } from "@gw/test-support";
import { RELAXED_LIMITS } from "./auth-helpers";
import { startTestServer, type TestServer } from "./harness";

export const WEBHOOK_SECRET = "whsec_test_secret";

export interface EventOptions {
  id?: string;
  /** Unix seconds */
  created?: number;
  livemode?: boolean;
}

export function stripeEvent(type: string, object: Record<string, unknown>, opts: EventOptions = {}): Record<string, unknown> {
  return {
    id: opts.id ?? newId("evt"),
    object: "event",
    api_version: Stripe.API_VERSION,
    created: opts.created ?? Math.floor(Date.now() / 1000),
    livemode: opts.livemode ?? false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

/** Posts an event signed like Stripe does (or with the given header). */
export async function deliver(server: TestServer, event: Record<string, unknown>, opts: { signature?: string | null; payload?: string } = {}): Promise<Response> {
  const payload = opts.payload ?? JSON.stringify(event);
  const headers: Record<string, string> = { "content-type": "application/json" };
  const signature = opts.signature === undefined
    ? Stripe.webhooks.generateTestHeaderString({ payload: JSON.stringify(event), secret: WEBHOOK_SECRET })
    : opts.signature;
  if (signature !== null) headers["stripe-signature"] = signature;
  return fetch(`${server.url}/api/billing/webhook`, { method: "POST", headers, body: payload });
}

/** The same deliveries, shuffled and sent concurrently, as a retrying processor can do. */
export async function deliverConcurrently(server: TestServer, events: Array<Record<string, unknown>>): Promise<number[]> {
  const shuffled = [...events].sort(() => Math.random() - 0.5);
  const responses = await Promise.all(shuffled.map((e) => deliver(server, e)));
  return responses.map((r) => r.status);
}

/** Balance equals the sum of the user's ledger entries, the chain verifies, and nothing is negative. */
export async function expectLedgerConsistent(server: TestServer, userIds: string[]): Promise<void> {
  const ledger = server.app.context.ledger;
  // settled charges are written in the background; write them (and give back reservations) before comparing
  await ledger.flush();
  for (const userId of userIds) {
    const entries = await ledger.entries(userId, { limit: 10_000 });
    const sum = entries.reduce((acc, e) => acc + e.amount, 0);
    expect(await ledger.balance(userId)).toBe(sum);
    expect(sum).toBeGreaterThanOrEqual(0);
  }
  const verified = await ledger.verify();
  expect(verified.problems).toEqual([]);
  expect(verified.ok).toBe(true);
}

/**
 * A test server whose Stripe is a fake for the enclosing describe, handed to `started` once both run. Every user in
 * `users` (newUser adds one) has a consistent ledger when the suite ends.
 */
export function webhookStand(started: (server: TestServer, fake: FakeStripe) => void): { users: string[]; newUser: () => string } {
  let server: TestServer | undefined;
  let fake: FakeStripe | undefined;
  const users: string[] = [];
  beforeAll(async () => {
    fake = await startFakeStripe({ now: () => (server ? server.clock.now() : Date.now()) });
    server = await startTestServer({ env: { ...RELAXED_LIMITS, STRIPE_API_BASE: fake.url } });
    started(server, fake);
  });
  afterAll(async () => {
    if (server) await expectLedgerConsistent(server, users);
    await server?.close();
    await fake?.close();
  });
  const newUser = () => {
    const id = newId("usr");
    users.push(id);
    return id;
  };
  return { users, newUser };
}
