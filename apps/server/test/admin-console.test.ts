// CONTRACT 12 over real HTTP: who may call /api/admin, credit adjustments, suspensions, redemption codes under
// concurrency, and the audit log of every change. The ledger is checked consistent at the end.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, login, PASSWORD, RELAXED_LIMITS, uniqueEmail, verifiedUser } from "./auth-helpers";
import { expectLedgerConsistent } from "./billing-support";
import { startTestServer, type TestServer } from "./harness";

const ADMIN_EMAIL = uniqueEmail("admin");
const SECOND_ADMIN_EMAIL = uniqueEmail("admin2");

let server: TestServer;
let admin: { email: string; cookie: string; id: string };
const users: string[] = [];

async function newUser(): Promise<{ email: string; cookie: string; id: string }> {
  const user = await verifiedUser(server, uniqueEmail("customer"));
  users.push(user.id);
  return user;
}

async function newKey(cookie: string): Promise<string> {
  const res = await call(server, "POST", "/api/keys", { cookie, body: { name: "test" } });
  expect(res.status).toBe(201);
  return res.body.key as string;
}

const adminCall = (method: string, route: string, body?: unknown) => call(server, method, route, { cookie: admin.cookie, body });

async function balanceOf(userId: string): Promise<number> {
  const res = await adminCall("GET", `/api/admin/users/${userId}`);
  expect(res.status).toBe(200);
  return res.body.balance as number;
}

beforeAll(async () => {
  server = await startTestServer({ env: { ...RELAXED_LIMITS, ADMIN_EMAILS: ` ${ADMIN_EMAIL.toUpperCase()} , ${SECOND_ADMIN_EMAIL}` } });
  admin = await verifiedUser(server, ADMIN_EMAIL);
  users.push(admin.id);
});

afterAll(async () => {
  if (server) await expectLedgerConsistent(server, users);
  await server?.close();
});

describe("who may call /api/admin", () => {
  it("no session: 401 unauthorized; a customer's session, an unverified admin e-mail, or an API key (even the admin's): 403 admin_required", async () => {
    const customer = await newUser();
    const noSession = await call(server, "GET", "/api/admin/users");
    expect(noSession.status).toBe(401);
    expect(noSession.body.error.code).toBe("unauthorized");

    for (const route of ["/api/admin/users", `/api/admin/users/${customer.id}`, "/api/admin/audit", "/api/admin/redemption-codes"]) {
      const res = await call(server, "GET", route, { cookie: customer.cookie });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: "admin_required", type: "permission_error" });
    }
    const post = await call(server, "POST", `/api/admin/users/${customer.id}/credits`, { cookie: customer.cookie, body: { amount: 100, reason: "self-service" } });
    expect(post.status).toBe(403);
    expect(post.body.error.code).toBe("admin_required");

    const customerKey = await newKey(customer.cookie);
    const adminKey = await newKey(admin.cookie);
    for (const key of [customerKey, adminKey]) {
      const res = await call(server, "GET", "/api/admin/users", { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("admin_required");
      const credit = await call(server, "POST", `/api/admin/users/${customer.id}/credits`, { headers: { authorization: `Bearer ${key}` }, body: { amount: 5, reason: "key" } });
      expect(credit.status).toBe(403);
    }

    // the second admin e-mail signs up but does not verify: not an admin
    const signup = await call(server, "POST", "/api/auth/signup", { body: { email: SECOND_ADMIN_EMAIL, password: PASSWORD, name: "Second" } });
    expect(signup.status).toBe(201);
    users.push(signup.body.user.id as string);
    const unverified = await call(server, "GET", "/api/admin/users", { cookie: await login(server, SECOND_ADMIN_EMAIL) });
    expect(unverified.status).toBe(403);
    expect(unverified.body.error.code).toBe("admin_required");
    expect(await balanceOf(customer.id)).toBe(0);
  });

  it("the admin's own access flag (tRPC) says who sees the Admin section", async () => {
    const customer = await newUser();
    const asAdmin = await call(server, "GET", "/api/trpc/admin.access", { cookie: admin.cookie });
    expect(asAdmin.body.result.data).toEqual({ admin: true });
    const asCustomer = await call(server, "GET", "/api/trpc/admin.access", { cookie: customer.cookie });
    expect(asCustomer.body.result.data).toEqual({ admin: false });
  });
});

describe("OpenAPI document", () => {
  it("lists the admin routes (admin session only, 403 admin_required) and the redemption", async () => {
    const doc = (await call(server, "GET", "/api/openapi.json")).body;
    for (const [path, method] of [["/admin/users", "get"], ["/admin/users/{id}", "get"], ["/admin/users/{id}/ledger", "get"], ["/admin/users/{id}/credits", "post"],
      ["/admin/users/{id}/suspend", "post"], ["/admin/users/{id}/unsuspend", "post"], ["/admin/users/{id}/revoke-keys", "post"],
      ["/admin/redemption-codes", "get"], ["/admin/redemption-codes", "post"], ["/admin/audit", "get"]] as const) {
      const operation = doc.paths[path][method];
      expect(operation.security, path).toEqual([{ session: [] }]);
      expect(operation.responses["403"].description, path).toContain("admin_required");
    }
    expect(doc.paths["/admin/redemption-codes"].post.responses["201"]).toBeDefined();
    expect(doc.paths["/admin/users/{id}/credits"].post.responses["409"].description).toContain("conflict");
    expect(doc.paths["/billing/redeem"].post.responses["410"].description).toContain("code_expired");
    expect(doc.paths["/billing/subscription"].get.responses["403"].description).toContain("account_suspended");
  });
});

describe("users", () => {
  it("lists with search, status filter and paging", async () => {
    const tag = `needle${Date.now()}`;
    const found = [];
    for (let i = 0; i < 3; i++) found.push(await verifiedUser(server, `${tag}-${i}@example.com`));
    users.push(...found.map((u) => u.id));
    const all = await adminCall("GET", `/api/admin/users?query=${tag.toUpperCase()}&limit=100`);
    expect(all.status).toBe(200);
    expect(all.body.users.map((u: { email: string }) => u.email).sort()).toEqual(found.map((u) => u.email).sort());
    expect(all.body.users[0]).toMatchObject({ plan: "free", balance: 0, spend_30d: 0, status: "active" });
    expect(Object.keys(all.body.users[0]).sort()).toEqual(["balance", "created_at", "email", "id", "name", "plan", "spend_30d", "status"]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof call>> = await adminCall("GET", `/api/admin/users?query=${tag}&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      expect(page.body.users.length).toBeLessThanOrEqual(1);
      seen.push(...page.body.users.map((u: { id: string }) => u.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual(found.map((u) => u.id).sort());

    // a regular expression in the query is matched literally
    expect((await adminCall("GET", "/api/admin/users?query=.*")).body.users).toEqual([]);
    for (const bad of ["limit=0", "limit=101", "status=banned", "cursor=garbage"]) {
      const res = await adminCall("GET", `/api/admin/users?${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_parameter");
    }
    expect((await adminCall("GET", "/api/admin/users/usr_unknown")).status).toBe(404);
  });
});

describe("credit adjustments", () => {
  it("credits and debits as adjustment entries; never below zero (409 naming the balance); bad amounts 400, nothing charged", async () => {
    const customer = await newUser();
    const route = `/api/admin/users/${customer.id}/credits`;
    for (const amount of [0, 1.234, "5", null, 0.001, 2_000_000]) {
      const res = await adminCall("POST", route, { amount, reason: "bad" });
      expect(res.status, JSON.stringify(amount)).toBe(400);
      expect(res.body.error.code).toBe("invalid_parameter");
    }
    expect((await adminCall("POST", route, { amount: 5 })).status).toBe(400);
    expect((await adminCall("POST", route, { amount: 5, reason: " " })).status).toBe(400);
    expect(await balanceOf(customer.id)).toBe(0);

    const credited = await adminCall("POST", route, { amount: 5.25, reason: "first try" });
    expect(credited.status).toBe(200);
    expect(credited.body).toEqual({ success: true, amount: 5.25, balance: 5.25 });

    const tooMuch = await adminCall("POST", route, { amount: -10, reason: "take back" });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body.error.code).toBe("conflict");
    expect(tooMuch.body.error.message).toContain("$5.25");
    expect(await balanceOf(customer.id)).toBe(5.25);

    const debited = await adminCall("POST", route, { amount: -2.25, reason: "take back" });
    expect(debited.body).toEqual({ success: true, amount: -2.25, balance: 3 });

    const ledger = await adminCall("GET", `/api/admin/users/${customer.id}/ledger?limit=10`);
    expect(ledger.status).toBe(200);
    expect(ledger.body.entries.map((e: { type: string; amount: number; balance_after: number }) => [e.type, e.amount, e.balance_after]))
      .toEqual([["adjustment", -2.25, 3], ["adjustment", 5.25, 5.25]]);
    const own = await call(server, "GET", "/api/billing/history", { cookie: customer.cookie });
    expect(own.body.entries).toEqual(ledger.body.entries);

    const unknown = await adminCall("POST", "/api/admin/users/usr_nobody/credits", { amount: 5, reason: "x" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
  });
});

describe("suspension", () => {
  it("refuses every key (403 account_suspended), revokes the sessions, refuses the login; unsuspend restores keys and login", async () => {
    const customer = await newUser();
    const key = await newKey(customer.cookie);
    const bearer = { authorization: `Bearer ${key}` };
    expect((await call(server, "GET", "/v1/models", { headers: bearer })).status).toBe(200);

    const suspended = await adminCall("POST", `/api/admin/users/${customer.id}/suspend`);
    expect(suspended.status).toBe(200);
    expect(suspended.body.user.status).toBe("suspended");

    for (const route of ["/v1/models", "/api/billing/subscription", "/api/billing/credits", "/api/usage"]) {
      const res = await call(server, "GET", route, { headers: bearer });
      expect(res.status, route).toBe(403);
      expect(res.body.error, route).toMatchObject({ code: "account_suspended", type: "permission_error" });
    }
    expect((await call(server, "GET", "/api/auth/me", { cookie: customer.cookie })).status).toBe(401);
    const loginAgain = await call(server, "POST", "/api/auth/login", { body: { email: customer.email, password: PASSWORD } });
    expect(loginAgain.status).toBe(403);
    expect(loginAgain.body.error.code).toBe("account_suspended");
    const wrongPassword = await call(server, "POST", "/api/auth/login", { body: { email: customer.email, password: "Wrong-Pass-123" } });
    expect(wrongPassword.status).toBe(401);

    const filtered = await adminCall("GET", `/api/admin/users?status=suspended&query=${encodeURIComponent(customer.email)}`);
    expect(filtered.body.users.map((u: { id: string }) => u.id)).toEqual([customer.id]);

    const lifted = await adminCall("POST", `/api/admin/users/${customer.id}/unsuspend`);
    expect(lifted.body.user.status).toBe("active");
    expect((await call(server, "GET", "/v1/models", { headers: bearer })).status).toBe(200);
    await login(server, customer.email);
  });

  it("revoke-keys revokes every key of the user", async () => {
    const customer = await newUser();
    const keys = [await newKey(customer.cookie), await newKey(customer.cookie)];
    const res = await adminCall("POST", `/api/admin/users/${customer.id}/revoke-keys`);
    expect(res.body).toEqual({ success: true, revoked: 2 });
    for (const key of keys) expect((await call(server, "GET", "/v1/models", { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    const detail = await adminCall("GET", `/api/admin/users/${customer.id}`);
    expect(detail.body.keys).toEqual([]);
  });

  it("the last active admin cannot suspend themselves (409); an admin can suspend a customer", async () => {
    const self = await adminCall("POST", `/api/admin/users/${admin.id}/suspend`);
    expect(self.status).toBe(409);
    expect(self.body.error.code).toBe("conflict");
    expect((await adminCall("GET", "/api/admin/users?limit=1")).status).toBe(200);
  });
});

describe("redemption codes", () => {
  async function createCode(body: Record<string, unknown>): Promise<string> {
    const res = await adminCall("POST", "/api/admin/redemption-codes", body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.code as string;
  }

  const redeem = (cookie: string, code: string) => call(server, "POST", "/api/billing/redeem", { cookie, body: { code } });

  it("creates, lists and redeems once per user (409 after); unknown 404; expired 410; bad input 400", async () => {
    const code = await createCode({ amount: 2.5, max_redemptions: 10, code: `WELCOME-${Date.now()}` });
    const customer = await newUser();
    const first = await redeem(customer.cookie, code);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, amount: 2.5, balance: 2.5 });
    const again = await redeem(customer.cookie, code);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");
    expect((await redeem(customer.cookie, "NO-SUCH-CODE")).status).toBe(404);

    const dup = await adminCall("POST", "/api/admin/redemption-codes", { amount: 1, max_redemptions: 1, code });
    expect(dup.status).toBe(409);
    for (const body of [{ amount: 0, max_redemptions: 1 }, { amount: 1.005, max_redemptions: 1 }, { amount: 1, max_redemptions: 0 },
      { amount: 1, max_redemptions: 1.5 }, { amount: 1, max_redemptions: 1, code: "a b" }, { amount: 1, max_redemptions: 1, expires_at: "2000-01-01T00:00:00Z" }]) {
      const res = await adminCall("POST", "/api/admin/redemption-codes", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }

    const soon = await createCode({ amount: 1, max_redemptions: 5, expires_at: new Date(server.clock.now() + 60_000).toISOString() });
    server.clock.advance(61_000);
    const late = await redeem(customer.cookie, soon);
    expect(late.status).toBe(410);
    expect(late.body.error.code).toBe("code_expired");

    const listed = await adminCall("GET", "/api/admin/redemption-codes");
    const row = listed.body.codes.find((c: { code: string }) => c.code === code);
    expect(row).toMatchObject({ amount: 2.5, max_redemptions: 10, redeemed: 1, expires_at: null });
    const history = await call(server, "GET", "/api/billing/history", { cookie: customer.cookie });
    expect(history.body.entries[0]).toMatchObject({ type: "redemption", amount: 2.5 });
  });

  it("one user redeeming one code many times at once: exactly one success, the others 409", async () => {
    const code = await createCode({ amount: 1, max_redemptions: 100 });
    const customer = await newUser();
    const results = await Promise.all(Array.from({ length: 6 }, () => redeem(customer.cookie, code)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    expect(await balanceOf(customer.id)).toBe(1);
  });

  it("many users racing past max_redemptions: exactly max succeed, the others 410 code_expired", async () => {
    const max = 3;
    const code = await createCode({ amount: 0.5, max_redemptions: max });
    // one after another: a mail being written is not yet readable by the helper that finds the verification link
    const racers = [];
    for (let i = 0; i < 8; i++) racers.push(await newUser());
    const results = await Promise.all(racers.map((u) => redeem(u.cookie, code)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(max);
    expect(statuses.filter((s) => s === 410)).toHaveLength(racers.length - max);
    for (const r of results.filter((x) => x.status === 410)) expect(r.body.error.code).toBe("code_expired");
    const balances = await Promise.all(racers.map((u) => balanceOf(u.id)));
    expect(balances.reduce((a, b) => a + b, 0)).toBe(max * 0.5);
    const listed = await adminCall("GET", "/api/admin/redemption-codes?limit=100");
    expect(listed.body.codes.find((c: { code: string }) => c.code === code).redeemed).toBe(max);
  });
});

/** A raw document written as a crashed request would have left it. */
type StoredDoc = { _id: string } & Record<string, unknown>;

describe("redemptions that stopped midway (a crash between steps)", () => {
  const redeem = (cookie: string, code: string) => call(server, "POST", "/api/billing/redeem", { cookie, body: { code } });

  it("a slot taken without a credit is freed once abandoned; a credit written before the crash is never written twice", async () => {
    const code = (await adminCall("POST", "/api/admin/redemption-codes", { amount: 1, max_redemptions: 1 })).body.code as string;
    const [crashed, other] = [await newUser(), await newUser()];
    const db = server.db.connection;
    const at = new Date(server.clock.now());
    // `crashed` stopped after taking the only slot, before the credit
    await db.collection<StoredDoc>("redemption_claims").insertOne({ _id: `${code}:${crashed.id}`, code, userId: crashed.id, claimedAt: at });
    await db.collection<StoredDoc>("redemption_slots").insertOne({ _id: `${code}#1`, code, n: 1, userId: crashed.id });
    expect((await redeem(other.cookie, code)).status).toBe(410);
    expect((await redeem(crashed.cookie, code)).status).toBe(409);

    server.clock.advance(6 * 60_000);
    const freed = await redeem(other.cookie, code);
    expect(freed.status).toBe(200);
    expect((await redeem(crashed.cookie, code)).status).toBe(410);
    expect(await balanceOf(other.id) + await balanceOf(crashed.id)).toBe(1);

    // `credited` stopped after the ledger credit, before marking its claim: its retry credits nothing more
    const second = (await adminCall("POST", "/api/admin/redemption-codes", { amount: 2, max_redemptions: 5 })).body.code as string;
    const credited = await newUser();
    await db.collection<StoredDoc>("redemption_claims").insertOne({ _id: `${second}:${credited.id}`, code: second, userId: credited.id, claimedAt: new Date(server.clock.now()) });
    await db.collection<StoredDoc>("redemption_slots").insertOne({ _id: `${second}#1`, code: second, n: 1, userId: credited.id });
    await server.app.context.ledger.credit(credited.id, 2_000_000, { kind: "redemption", idempotencyKey: `redeem:${second}:${credited.id}` });
    server.clock.advance(6 * 60_000);
    const retry = await redeem(credited.cookie, second);
    expect(retry.status).toBe(409);
    expect(await balanceOf(credited.id)).toBe(2);
  });
});

describe("audit log", () => {
  it("has every admin change with actor, target, before, after and IP; pages with next_before", async () => {
    const customer = await newUser();
    await adminCall("POST", `/api/admin/users/${customer.id}/credits`, { amount: 3, reason: "audit me" });
    await adminCall("POST", `/api/admin/users/${customer.id}/suspend`);
    await adminCall("POST", `/api/admin/users/${customer.id}/unsuspend`);
    await adminCall("POST", `/api/admin/users/${customer.id}/revoke-keys`);
    const code = (await adminCall("POST", "/api/admin/redemption-codes", { amount: 1, max_redemptions: 2 })).body.code as string;

    const log = await adminCall("GET", "/api/admin/audit?limit=5");
    expect(log.status).toBe(200);
    const entries = log.body.entries as Array<Record<string, unknown>>;
    expect(entries.map((e) => e.action)).toEqual(["redemption_code.create", "user.revoke_keys", "user.unsuspend", "user.suspend", "user.credit"]);
    expect(entries[4]).toMatchObject({
      actor: { user_id: admin.id, email: admin.email, via: "api" },
      target: { type: "user", id: customer.id },
      before: { balance: 0 },
      after: { balance: 3, amount: 3, reason: "audit me" },
    });
    expect(entries[3]).toMatchObject({ before: { status: "active" }, after: { status: "suspended" } });
    expect(entries[0]).toMatchObject({ target: { type: "redemption_code", id: code } });
    for (const e of entries) {
      expect(e.ip).toMatch(/127\.0\.0\.1/);
      expect(typeof e.created_at).toBe("string");
    }
    const older = await adminCall("GET", `/api/admin/audit?limit=5&before=${log.body.next_before as string}`);
    expect(older.status).toBe(200);
    expect(older.body.entries.every((e: { id: string }) => e.id < (entries[4]?.id as string))).toBe(true);
  });
});
