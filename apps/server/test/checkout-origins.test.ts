import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, RELAXED_LIMITS, verifiedUser } from "./auth-helpers";
import { startTestServer, type TestServer } from "./harness";

// Stripe Checkout sends the customer back to success_url / cancel_url: only PUBLIC_URL's origin and the ones listed in
// CHECKOUT_ALLOWED_ORIGINS are taken, so the gateway's checkout cannot forward its customers to another site.

const PUBLIC = "https://gateway.example.test";
const LISTED = "https://shop.example.test:8443";

describe("Checkout return addresses", () => {
  let server: TestServer;
  let cookie: string;

  beforeAll(async () => {
    server = await startTestServer({ env: { ...RELAXED_LIMITS, LIMIT_CHECKOUT: "1000/60", PUBLIC_URL: PUBLIC, CHECKOUT_ALLOWED_ORIGINS: LISTED } });
    ({ cookie } = await verifiedUser(server));
  });
  afterAll(async () => {
    await server.close();
  });

  const checkout = (success_url: string, cancel_url: string) =>
    call(server, "POST", "/api/billing/create-checkout-session", { cookie, headers: { origin: PUBLIC }, body: { type: "credits", amount: 10, success_url, cancel_url } });

  it("takes PUBLIC_URL's origin and a listed one", async () => {
    for (const [ok, back] of [[`${PUBLIC}/dashboard/billing?checkout=success`, `${PUBLIC}/dashboard/billing`], [`${LISTED}/thanks`, `${LISTED}/cart`]] as const) {
      const res = await checkout(ok, back);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ session_id: expect.any(String), url: expect.any(String) });
    }
  });

  it.each([
    ["another host", "http://evil.example/collect", `${PUBLIC}/x`, "success_url"],
    ["PUBLIC_URL's host over http", "http://gateway.example.test/x", `${PUBLIC}/x`, "success_url"],
    ["a listed host on another port", "https://shop.example.test/x", `${PUBLIC}/x`, "success_url"],
    ["a cancel_url elsewhere", `${PUBLIC}/x`, "https://evil.example/", "cancel_url"],
  ])("refuses %s with 400 naming the field", async (_what, success, cancel, field) => {
    const res = await checkout(success, cancel);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: `Invalid parameter '${field}': must be on ${PUBLIC} or ${LISTED}.`, type: "invalid_request_error", code: "invalid_parameter" } });
  });
});
