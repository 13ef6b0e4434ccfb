import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { call, login, PASSWORD, RELAXED_LIMITS, sessionCookie, signup, tokenFromMail, uniqueEmail } from "./auth-helpers";
import { holdPoint } from "./support/hold-point";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

describe("sessions: cookie, expiry, renewal, revocation", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: RELAXED_LIMITS });
  });
  afterAll(async () => {
    await server.close();
  });

  async function freshLogin(): Promise<{ email: string; cookie: string }> {
    const email = uniqueEmail("sess");
    await signup(server, email);
    return { email, cookie: await login(server, email) };
  }

  it("sets an HttpOnly, SameSite=Lax, Path=/ cookie lasting SESSION_TTL_DAYS (Secure off only by COOKIE_SECURE=false)", async () => {
    const email = uniqueEmail("cookie");
    await signup(server, email);
    const res = await call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } });
    const line = res.headers.getSetCookie().find((c) => c.startsWith("gw_session="));
    expect(line).toMatch(/HttpOnly/i);
    expect(line).toMatch(/SameSite=Lax/i);
    expect(line).toMatch(/Path=\//);
    expect(line).toMatch(new RegExp(`Max-Age=${7 * 24 * 3600}`));
    expect(line).not.toMatch(/Secure/i);
  });

  it("issues a fresh session at every login", async () => {
    const { email, cookie } = await freshLogin();
    expect(await login(server, email)).not.toBe(cookie);
  });

  it("answers 401 session_expired once the lifetime has passed without use", async () => {
    const { cookie } = await freshLogin();
    server.clock.advance(7 * DAY + MIN);
    const res = await call(server, "GET", "/api/auth/me", { cookie });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { message: expect.any(String), type: "authentication_error", code: "session_expired" } });
  });

  it("the dashboard's auth.session answers 200 with the user, or null and why (no 401 for a signed-out page)", async () => {
    const session = async (cookie?: string) => {
      const res = await fetch(`${server.url}/api/trpc/auth.session`, { headers: cookie ? { cookie } : {} });
      return { status: res.status, body: (await res.json()) as { result: { data: unknown } } };
    };
    expect(await session()).toEqual({ status: 200, body: { result: { data: { user: null, ended: "unauthorized" } } } });
    const { email, cookie } = await freshLogin();
    const signedIn = await session(cookie);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.result.data).toEqual({ user: { id: expect.any(String), email, name: expect.any(String), created_at: expect.any(String), email_verified: false }, ended: null });
    server.clock.advance(7 * DAY + MIN);
    expect(await session(cookie)).toEqual({ status: 200, body: { result: { data: { user: null, ended: "session_expired" } } } });
  });

  it("logout with an expired or revoked session still clears the cookie (401 as before)", async () => {
    const cleared = (headers: Headers) => headers.getSetCookie().find((c) => c.startsWith("gw_session="));
    const expired = await freshLogin();
    server.clock.advance(7 * DAY + MIN);
    const afterExpiry = await call(server, "POST", "/api/auth/logout", { cookie: expired.cookie });
    expect(afterExpiry.status).toBe(401);
    expect(afterExpiry.body).toEqual({ error: { message: expect.any(String), type: "authentication_error", code: "session_expired" } });
    expect(cleared(afterExpiry.headers)).toMatch(/^gw_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax/);

    const { cookie } = await freshLogin();
    expect((await call(server, "POST", "/api/auth/logout", { cookie })).status).toBe(200);
    const revoked = await call(server, "POST", "/api/auth/logout", { cookie });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe("unauthorized");
    expect(cleared(revoked.headers)).toMatch(/^gw_session=; Max-Age=0/);

    const none = await call(server, "POST", "/api/auth/logout");
    expect(none.status).toBe(401);
    expect(cleared(none.headers)).toBeUndefined();
  });

  it("renews on use: a re-issued cookie carries the session past the first expiry", async () => {
    const { cookie } = await freshLogin();
    server.clock.advance(6 * DAY);
    const used = await call(server, "GET", "/api/auth/me", { cookie });
    expect(used.status).toBe(200);
    const renewed = sessionCookie(used.headers);
    expect(renewed).toBeDefined();
    server.clock.advance(2 * DAY); // 8 days after login, 2 after renewal
    const later = await call(server, "GET", "/api/auth/me", { cookie: renewed });
    expect(later.status).toBe(200);
    // the old cookie still names the old expiry
    const stale = await call(server, "GET", "/api/auth/me", { cookie });
    expect(stale.status).toBe(401);
    expect(stale.body.error.code).toBe("session_expired");
  });

  it("does not renew more than once per few minutes", async () => {
    const { cookie } = await freshLogin();
    const first = await call(server, "GET", "/api/auth/me", { cookie });
    expect(sessionCookie(first.headers)).toBeUndefined();
    server.clock.advance(6 * MIN);
    const second = await call(server, "GET", "/api/auth/me", { cookie });
    expect(sessionCookie(second.headers)).toBeDefined();
  });

  it("never renews past SESSION_MAX_DAYS after login", async () => {
    let { cookie } = await freshLogin();
    for (let day = 6; day <= 30; day += 6) {
      server.clock.advance(6 * DAY);
      const res = await call(server, "GET", "/api/auth/me", { cookie });
      if (day < 30) {
        expect(res.status).toBe(200);
        cookie = sessionCookie(res.headers) ?? cookie;
      } else {
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe("session_expired");
      }
    }
  });

  it("logout answers {success, message}, clears the cookie, and the replayed old cookie gets 401", async () => {
    const { cookie } = await freshLogin();
    const res = await call(server, "POST", "/api/auth/logout", { cookie });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.any(String) });
    expect(res.headers.getSetCookie().find((c) => c.startsWith("gw_session="))).toMatch(/Max-Age=0/);
    const replay = await call(server, "GET", "/api/auth/me", { cookie });
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe("unauthorized");
    const again = await call(server, "POST", "/api/auth/logout", { cookie });
    expect(again.status).toBe(401);
  });

  it("refuses a cookie-authenticated state change from a foreign Origin with 403 csrf_rejected", async () => {
    const { cookie } = await freshLogin();
    const res = await call(server, "POST", "/api/auth/logout", { cookie, headers: { origin: "https://evil.example" } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: "csrf_rejected", type: "permission_error" });
    const same = await call(server, "POST", "/api/auth/logout", { cookie, headers: { origin: new URL(server.config.publicUrl).origin } });
    expect(same.status).toBe(200);
  });

  it("the gateway's cookie path (the dashboard playground) refuses a foreign Origin with 403 csrf_rejected too", async () => {
    const { cookie } = await freshLogin();
    const body = { model: "no-such-model", prompt: "hi" };
    const foreign = await call(server, "POST", "/api/v1/task", { cookie, body, headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toMatchObject({ code: "csrf_rejected", type: "permission_error" });
    const same = await call(server, "POST", "/api/v1/task", { cookie, body, headers: { origin: new URL(server.config.publicUrl).origin } });
    expect(same.status).toBe(400);
    expect(same.body.error.code).toBe("unsupported_model");
    // a long Origin is quoted shortened, as on the /api routes
    const long = `https://${"e".repeat(5_000)}.example`;
    const quoted = await call(server, "POST", "/api/v1/task", { cookie, body, headers: { origin: long } });
    expect(quoted.status).toBe(403);
    expect(quoted.body.error.message).toBe(`Cross-site request refused: Origin ${long.slice(0, 200)} is not ${new URL(server.config.publicUrl).origin}.`);
  });

  it("password reset: always 200, link mailed only to real accounts, confirm revokes every session", async () => {
    const { email, cookie } = await freshLogin();
    const unknown = await call(server, "POST", "/api/auth/password-reset", { body: { email: uniqueEmail("ghost") } });
    expect(unknown.status).toBe(200);
    const res = await call(server, "POST", "/api/auth/password-reset", { body: { email } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(unknown.body);
    expect(res.body).toEqual({ success: true, message: expect.any(String) });
    // the mail is sent after the answer
    const token = await vi.waitFor(() => tokenFromMail(server, email, "reset-password"));

    const weak = await call(server, "POST", "/api/auth/password-reset/confirm", { body: { token, password: "weak" } });
    expect(weak.status).toBe(400);
    expect(weak.body.error.code).toBe("weak_password");

    const newPassword = "Violet-Harbor-57";
    const ok = await call(server, "POST", "/api/auth/password-reset/confirm", { body: { token, password: newPassword } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true, message: expect.any(String) });
    expect((await call(server, "GET", "/api/auth/me", { cookie })).status).toBe(401);
    const oldPassword = await call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } });
    expect(oldPassword.status).toBe(401);
    expect(await login(server, email, newPassword)).toMatch(/^gw_session=/);

    const replay = await call(server, "POST", "/api/auth/password-reset/confirm", { body: { token, password: "Another-Pass-99" } });
    expect(replay.status).toBe(400);
    expect(replay.body.error.code).toBe("invalid_token");
  });

  it("a login with the old password still under way when a password reset completes leaves no session", async () => {
    const { email } = await freshLogin();
    await call(server, "POST", "/api/auth/password-reset", { body: { email } });
    const token = await vi.waitFor(() => tokenFromMail(server, email, "reset-password"));
    // hold the login after its password check, before its session is stored, until the reset is done
    const hold = holdPoint();
    const sessions = server.app.context.auth.sessions;
    const start = sessions.start.bind(sessions);
    sessions.start = async (userId) => {
      await hold.pass();
      return start(userId);
    };
    try {
      const loggingIn = call(server, "POST", "/api/auth/login", { body: { email, password: PASSWORD } });
      await hold.reached;
      sessions.start = start;
      const reset = await call(server, "POST", "/api/auth/password-reset/confirm", { body: { token, password: "Violet-Harbor-58" } });
      expect(reset.status).toBe(200);
      hold.release();
      const stale = await loggingIn;
      expect(stale.status).toBe(401);
      expect(stale.body.error).toEqual({ message: "Invalid e-mail or password.", type: "authentication_error", code: "invalid_credentials" });
      expect(sessionCookie(stale.headers)).toBeUndefined();
    } finally {
      sessions.start = start;
      hold.release();
    }
    expect(await login(server, email, "Violet-Harbor-58")).toMatch(/^gw_session=/);
  });

  it("reset tokens expire after one hour", async () => {
    const { email } = await freshLogin();
    await call(server, "POST", "/api/auth/password-reset", { body: { email } });
    const token = await vi.waitFor(() => tokenFromMail(server, email, "reset-password"));
    server.clock.advance(61 * MIN);
    const res = await call(server, "POST", "/api/auth/password-reset/confirm", { body: { token, password: "Violet-Harbor-57" } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_token");
  });

  it("change-password checks the current password, signs other sessions out and keeps the caller in", async () => {
    const { email, cookie } = await freshLogin();
    const other = await login(server, email);
    const wrong = await call(server, "POST", "/api/auth/change-password", { cookie, body: { current_password: "Nope-Nope-11", new_password: "Violet-Harbor-57" } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe("invalid_credentials");
    const weak = await call(server, "POST", "/api/auth/change-password", { cookie, body: { current_password: PASSWORD, new_password: "short" } });
    expect(weak.status).toBe(400);
    expect(weak.body.error.code).toBe("weak_password");
    const ok = await call(server, "POST", "/api/auth/change-password", { cookie, body: { current_password: PASSWORD, new_password: "Violet-Harbor-57" } });
    expect(ok.status).toBe(200);
    const fresh = sessionCookie(ok.headers);
    expect((await call(server, "GET", "/api/auth/me", { cookie: fresh })).status).toBe(200);
    expect((await call(server, "GET", "/api/auth/me", { cookie: other })).status).toBe(401);
  });

  it("a password change still under way when a password reset completes neither overwrites the reset nor keeps a session", async () => {
    const { email, cookie } = await freshLogin();
    await call(server, "POST", "/api/auth/password-reset", { body: { email } });
    const token = await vi.waitFor(() => tokenFromMail(server, email, "reset-password"));
    // hold the change after its check of the current password, before it writes the new one, until the reset is done
    const hold = holdPoint();
    const users = server.app.context.auth.users;
    const setPasswordHash = users.setPasswordHash.bind(users);
    users.setPasswordHash = async (...args) => {
      users.setPasswordHash = setPasswordHash;
      await hold.pass();
      return setPasswordHash(...args);
    };
    try {
      const changing = call(server, "POST", "/api/auth/change-password", { cookie, body: { current_password: PASSWORD, new_password: "Amber-Lantern-61" } });
      await hold.reached;
      const reset = await call(server, "POST", "/api/auth/password-reset/confirm", { body: { token, password: "Violet-Harbor-59" } });
      expect(reset.status).toBe(200);
      hold.release();
      const stale = await changing;
      expect(stale.status).toBe(401);
      expect(stale.body.error.code).toBe("invalid_credentials");
      expect(sessionCookie(stale.headers)).toBeUndefined();
    } finally {
      users.setPasswordHash = setPasswordHash;
      hold.release();
    }
    expect(await login(server, email, "Violet-Harbor-59")).toMatch(/^gw_session=/);
    const old = await call(server, "POST", "/api/auth/login", { body: { email, password: "Amber-Lantern-61" } });
    expect(old.status).toBe(401);
  });
});
