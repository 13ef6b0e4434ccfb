// CONTRACT 12: a suspension made on one instance refuses the account's keys on another instance sharing the
// database within 1 s (the key cache's sub-second lifetime; no Redis here, so no eviction message helps).
import { randomBase62 } from "@gw/shared";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { call, RELAXED_LIMITS, uniqueEmail, verifiedUser } from "./auth-helpers";
import { startTestServer, type TestServer } from "./harness";

describe("suspension across two instances sharing one database", () => {
  let a: TestServer;
  let b: TestServer;
  const adminEmail = uniqueEmail("admin");

  beforeAll(async () => {
    const databaseName = `t_${randomBase62(12)}`;
    const env = { ...RELAXED_LIMITS, ADMIN_EMAILS: adminEmail };
    a = await startTestServer({ env, databaseName });
    b = await startTestServer({ env, databaseName });
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it("a key in use on instance B is refused there (403 account_suspended) within 1 s of the suspension on A, and accepted again after unsuspend", async () => {
    const admin = await verifiedUser(a, adminEmail);
    const customer = await verifiedUser(a, uniqueEmail("customer"));
    const created = await call(a, "POST", "/api/keys", { cookie: customer.cookie, body: { name: "b" } });
    const bearer = { authorization: `Bearer ${created.body.key as string}` };
    // B has the key cached as valid
    expect((await call(b, "GET", "/v1/models", { headers: bearer })).status).toBe(200);

    const suspended = await call(a, "POST", `/api/admin/users/${customer.id}/suspend`, { cookie: admin.cookie });
    expect(suspended.status).toBe(200);
    const at = performance.now();
    await vi.waitFor(async () => {
      const res = await call(b, "GET", "/v1/models", { headers: bearer });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("account_suspended");
    }, { timeout: 1_000, interval: 50 });
    expect(performance.now() - at).toBeLessThan(1_000);

    expect((await call(a, "POST", `/api/admin/users/${customer.id}/unsuspend`, { cookie: admin.cookie })).status).toBe(200);
    await vi.waitFor(async () => {
      expect((await call(b, "GET", "/v1/models", { headers: bearer })).status).toBe(200);
    }, { timeout: 1_000, interval: 50 });
  });
});
