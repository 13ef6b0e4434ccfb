import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";
import { call, login, mailsTo, PASSWORD, RELAXED_LIMITS, sessionCookie, signup, tokenFromMail, uniqueEmail } from "./auth-helpers";

const errorBody = (code: string, type: string) => ({ error: { message: expect.any(String), type, code } });

describe("accounts: signup, verification, login, me", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: RELAXED_LIMITS });
  });
  afterAll(async () => {
    await server.close();
  });

  it("signs up with 201 {success, message, user}, sets no session and mails a verification link", async () => {
    const email = uniqueEmail("signup");
    const res = await call(server, "POST", "/api/auth/signup", { body: { email: `  ${email.toUpperCase()} `, password: PASSWORD, name: "Ada" } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      message: expect.any(String),
      user: { id: expect.stringMatching(/^usr_/), email, name: "Ada", created_at: expect.any(String) },
    });
    expect(new Date(res.body.user.created_at).toISOString()).toBe(res.body.user.created_at);
    expect(sessionCookie(res.headers)).toBeUndefined();
    const mails = mailsTo(server, email);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.text).toContain(`${server.config.publicUrl}/verify-email?token=`);
  });

  it("refuses a second account for the same e-mail (any case) with 409 account_exists", async () => {
    const email = uniqueEmail("dup");
    await signup(server, email);
    const res = await call(server, "POST", "/api/auth/signup", { body: { email: email.toUpperCase(), password: PASSWORD, name: "Again" } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(errorBody("account_exists", "registration_error"));
  });

  it("lets exactly one of concurrent sign-ups with one e-mail win", async () => {
    const email = uniqueEmail("race");
    const results = await Promise.all(Array.from({ length: 5 }, () =>
      call(server, "POST", "/api/auth/signup", { body: { email, password: PASSWORD, name: "Racer" } })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
  });

  it.each([
    ["short", "Ab1!x", "at least 8 characters"],
    ["no upper case", "quartz-lamp-92", "upper-case"],
    ["no lower case", "QUARTZ-LAMP-92", "lower-case"],
    ["no digit", "Quartz-Lamp-xx", "digit"],
    ["no special character", "QuartzLamp92", "special character"],
    ["a common password", "Password123!", "commonly used"],
    ["huge", `Aa1!${"x".repeat(5000)}`.slice(0, 1000), "at most 256"],
  ])("rejects a weak password (%s) with 400 weak_password naming the rule", async (_label, password, rule) => {
    const email = uniqueEmail("weak");
    const res = await call(server, "POST", "/api/auth/signup", { body: { email, password, name: "Weak" } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody("weak_password", "invalid_request_error"));
    expect(res.body.error.message).toContain(rule);
    // nothing half-written: the e-mail is still free
    await signup(server, email);
  });

  it.each([
    ["missing email", { password: PASSWORD, name: "X" }, 400, "missing_required_parameter", "email"],
    ["missing password", { email: "a@example.com", name: "X" }, 400, "missing_required_parameter", "password"],
    ["missing name", { email: "a@example.com", password: PASSWORD }, 400, "missing_required_parameter", "name"],
    ["empty name", { email: "a@example.com", password: PASSWORD, name: "  " }, 400, "invalid_parameter", "name"],
    ["zero-width name", { email: "a@example.com", password: PASSWORD, name: "\u200b\u200d\u2060" }, 400, "invalid_parameter", "name"],
    ["Hangul-filler name", { email: "a@example.com", password: PASSWORD, name: "\u3164\u3164" }, 400, "invalid_parameter", "name"],
    ["invalid email", { email: "not-an-email", password: PASSWORD, name: "X" }, 400, "invalid_parameter", "email"],
    ["empty email", { email: "", password: PASSWORD, name: "X" }, 400, "invalid_parameter", "email"],
    ["wrong-typed email", { email: 42, password: PASSWORD, name: "X" }, 400, "invalid_parameter", "email"],
    ["operator object", { email: { $gt: "" }, password: PASSWORD, name: "X" }, 400, "invalid_parameter", "email"],
    ["oversized password", { email: "a@example.com", password: "A".repeat(5000), name: "X" }, 400, "invalid_parameter", "password"],
  ])("answers bad sign-up input (%s) with a 4xx naming the parameter", async (_label, body, status, code, param) => {
    const res = await call(server, "POST", "/api/auth/signup", { body });
    expect(res.status).toBe(status);
    expect(res.body).toEqual(errorBody(code, "invalid_request_error"));
    expect(res.body.error.message).toContain(param);
  });

  it("answers malformed JSON with 400 invalid_json", async () => {
    const res = await call(server, "POST", "/api/auth/signup", { raw: '{"email": "a@example.com",' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody("invalid_json", "invalid_request_error"));
  });

  it("reads a JSON body whose Content-Type is written in upper case (media types are case-insensitive)", async () => {
    const email = uniqueEmail("upper-ct");
    const raw = JSON.stringify({ email, password: PASSWORD, name: "Upper" });
    const created = await call(server, "POST", "/api/auth/signup", { raw, headers: { "content-type": "Application/JSON; charset=UTF-8" } });
    expect(created.status).toBe(201);
    const loggedIn = await call(server, "POST", "/api/auth/login", { raw: JSON.stringify({ email, password: PASSWORD }), headers: { "content-type": "APPLICATION/JSON" } });
    expect(loggedIn.status).toBe(200);
    const text = await call(server, "POST", "/api/auth/login", { raw: JSON.stringify({ email, password: PASSWORD }), headers: { "content-type": "TEXT/PLAIN" } });
    expect(text.status).toBe(415);
  });

  it("accepts an internationalised e-mail address", async () => {
    const email = `josé-${Date.now()}@exämple.de`;
    const res = await call(server, "POST", "/api/auth/signup", { body: { email, password: PASSWORD, name: "José" } });
    expect(res.status).toBe(201);
    expect(res.body.user.email).toBe(email);
    expect(await login(server, email)).toMatch(/^gw_session=/);
  });

  it.each([
    ["a dot-less domain", "ada@example"],
    ["an empty domain label", "ada@example..com"],
    ["a lone dot as domain", "ada@."],
    ["a domain label starting with a hyphen", "ada@-x.com"],
    ["a leading dot", ".ada@example.com"],
    ["two dots in a row", "ada..b@example.com"],
    ["angle brackets", "<ada>@example.com"],
    ["a comma (two recipients to a mailer)", "eve,ada@example.com"],
    ["an address literal", "ada@[127.0.0.1]"],
  ])("refuses a sign-up e-mail with %s with 400 invalid_parameter naming email", async (_label, email) => {
    const res = await call(server, "POST", "/api/auth/signup", { body: { email, password: PASSWORD, name: "X" } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody("invalid_parameter", "invalid_request_error"));
    expect(res.body.error.message).toBe("Invalid parameter 'email': must be a valid email.");
    expect(mailsTo(server, email)).toEqual([]);
  });

  it("accepts plus tags, subdomains and non-Latin scripts in a sign-up e-mail", async () => {
    for (const email of [`ada.l+gw-${Date.now()}@mail.example.co.uk`, `用户${Date.now()}@例子.中国`, `o'neil-${Date.now()}@xn--bcher-kva.example`]) {
      const res = await call(server, "POST", "/api/auth/signup", { body: { email, password: PASSWORD, name: "X" } });
      expect(res.status, email).toBe(201);
    }
  });

  it("treats an e-mail typed with combining accents as the same address as its precomposed form", async () => {
    const email = `jürgen-${Date.now()}@exämple.de`;
    const decomposed = email.normalize("NFD");
    expect(decomposed).not.toBe(email);
    await signup(server, email);
    const again = await call(server, "POST", "/api/auth/signup", { body: { email: decomposed, password: PASSWORD, name: "Twin" } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual(errorBody("account_exists", "registration_error"));
    const res = await call(server, "POST", "/api/auth/login", { body: { email: decomposed, password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(email);
  });

  it.each([
    ["its IDNA ASCII (punycode) domain", (local: string) => `${local}@exämple.de`, (local: string) => `${local}@xn--exmple-cua.de`],
    ["a full-width domain", (local: string) => `${local}@example.com`, (local: string) => `${local}@ｅｘａｍｐｌｅ.com`],
    ["an upper-case non-Latin domain", (local: string) => `${local}@exämple.de`, (local: string) => `${local}@EXÄMPLE.DE`],
  ])("treats an e-mail whose domain is written as %s as the same address (409 account_exists, same login)", async (_label, canonical, variant) => {
    const local = `idn-${Date.now()}`;
    const created = await signup(server, variant(local));
    expect(created.body.user.email).toBe(canonical(local));
    for (const other of [canonical(local), variant(local)]) {
      const again = await call(server, "POST", "/api/auth/signup", { body: { email: other, password: PASSWORD, name: "Twin" } });
      expect(again.status).toBe(409);
      expect(again.body).toEqual(errorBody("account_exists", "registration_error"));
      const res = await call(server, "POST", "/api/auth/login", { body: { email: other, password: PASSWORD } });
      expect(res.status).toBe(200);
      expect(res.body.user.id).toBe(created.body.user.id);
    }
    expect(mailsTo(server, canonical(local))).toHaveLength(1);
  });

  it("still finds an account whose e-mail was stored with an xn-- domain before domains were normalized", async () => {
    const email = `legacy-${Date.now()}@exämple.de`;
    const created = await signup(server, email);
    const stored = email.replace("exämple.de", "xn--exmple-cua.de");
    await server.db.connection.collection<{ _id: string; email: string }>("users").updateOne({ _id: created.body.user.id }, { $set: { email: stored } });
    for (const typed of [email, stored]) {
      const res = await call(server, "POST", "/api/auth/login", { body: { email: typed, password: PASSWORD } });
      expect(res.status).toBe(200);
      expect(res.body.user.id).toBe(created.body.user.id);
      const again = await call(server, "POST", "/api/auth/signup", { body: { email: typed, password: PASSWORD, name: "Twin" } });
      expect(again.status).toBe(409);
    }
  });

  it("still logs in an account whose e-mail was stored decomposed before e-mails were put in NFC", async () => {
    const email = `jörg-${Date.now()}@exämple.de`;
    const created = await signup(server, email);
    await server.db.connection.collection<{ _id: string; email: string }>("users").updateOne({ _id: created.body.user.id }, { $set: { email: email.normalize("NFD") } });
    for (const typed of [email, email.normalize("NFD")]) {
      const res = await call(server, "POST", "/api/auth/login", { body: { email: typed, password: PASSWORD } });
      expect(res.status).toBe(200);
      expect(res.body.user.id).toBe(created.body.user.id);
    }
  });

  it("logs in with 200 {success, user} and a session cookie; GET /api/auth/me answers the user", async () => {
    const email = uniqueEmail("login");
    const created = await signup(server, email, PASSWORD, "Grace");
    const res = await call(server, "POST", "/api/auth/login", { body: { email: email.toUpperCase(), password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, user: { ...created.body.user, email_verified: false } });
    const cookie = sessionCookie(res.headers);
    expect(cookie).toBeDefined();
    const me = await call(server, "GET", "/api/auth/me", { cookie });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ user: { ...created.body.user, email_verified: false } });
  });

  it("answers a wrong password and an unknown e-mail with the same 401 invalid_credentials", async () => {
    const email = uniqueEmail("creds");
    await signup(server, email);
    const wrong = await call(server, "POST", "/api/auth/login", { body: { email, password: "Wrong-Pass-123" } });
    const unknown = await call(server, "POST", "/api/auth/login", { body: { email: uniqueEmail("nobody"), password: PASSWORD } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(errorBody("invalid_credentials", "authentication_error"));
    expect(unknown.body).toEqual(wrong.body);
  });

  it("refuses operator objects and missing fields at login with 400, never a 500", async () => {
    const op = await call(server, "POST", "/api/auth/login", { body: { email: { $ne: null }, password: { $ne: null } } });
    expect(op.status).toBe(400);
    expect(op.body.error.code).toBe("invalid_parameter");
    const missing = await call(server, "POST", "/api/auth/login", { body: { email: "a@example.com" } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("missing_required_parameter");
  });

  it("answers a huge password at login with 401 without hashing it", async () => {
    const email = uniqueEmail("huge");
    await signup(server, email);
    const res = await call(server, "POST", "/api/auth/login", { body: { email, password: `${PASSWORD}${"x".repeat(900)}` } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("invalid_credentials");
  });

  it("GET /api/auth/me without a cookie or with garbage answers 401 unauthorized", async () => {
    const none = await call(server, "GET", "/api/auth/me");
    expect(none.status).toBe(401);
    expect(none.body).toEqual(errorBody("unauthorized", "authentication_error"));
    const garbage = await call(server, "GET", "/api/auth/me", { cookie: "gw_session=Fe26.2**garbage" });
    expect(garbage.status).toBe(401);
    expect(garbage.body.error.code).toBe("unauthorized");
  });

  it("verifies the e-mail once; the replayed token answers 400 invalid_token", async () => {
    const email = uniqueEmail("verify");
    await signup(server, email);
    const cookie = await login(server, email);
    const token = tokenFromMail(server, email, "verify-email");
    const ok = await call(server, "POST", "/api/auth/verify-email", { body: { token } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true, message: expect.any(String) });
    const me = await call(server, "GET", "/api/auth/me", { cookie });
    expect(me.body.user.email_verified).toBe(true);
    const replay = await call(server, "POST", "/api/auth/verify-email", { body: { token } });
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual(errorBody("invalid_token", "invalid_request_error"));
    const unknown = await call(server, "POST", "/api/auth/verify-email", { body: { token: "nope" } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe("invalid_token");
    const missing = await call(server, "POST", "/api/auth/verify-email", { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("missing_required_parameter");
  });

  it("uses a verification token only once under concurrency", async () => {
    const email = uniqueEmail("verify-race");
    await signup(server, email);
    const token = tokenFromMail(server, email, "verify-email");
    const results = await Promise.all(Array.from({ length: 6 }, () => call(server, "POST", "/api/auth/verify-email", { body: { token } })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(5);
  });

  it("expires verification tokens after 24 hours", async () => {
    const email = uniqueEmail("verify-old");
    await signup(server, email);
    const token = tokenFromMail(server, email, "verify-email");
    server.clock.advance(24 * 60 * 60 * 1000 + 1000);
    const res = await call(server, "POST", "/api/auth/verify-email", { body: { token } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_token");
  });

  it("resends the verification e-mail to a logged-in user (S)", async () => {
    const email = uniqueEmail("resend");
    await signup(server, email);
    const cookie = await login(server, email);
    const res = await call(server, "POST", "/api/auth/resend-verification", { cookie });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: "Verification e-mail sent." });
    expect(mailsTo(server, email)).toHaveLength(2);
    const anonymous = await call(server, "POST", "/api/auth/resend-verification");
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe("unauthorized");
  });

  it("changes the display name with PATCH /api/auth/me", async () => {
    const email = uniqueEmail("rename");
    await signup(server, email);
    const cookie = await login(server, email);
    const res = await call(server, "PATCH", "/api/auth/me", { cookie, body: { name: "  New Name " } });
    expect(res.status).toBe(200);
    expect(res.body.user.name).toBe("New Name");
    const empty = await call(server, "PATCH", "/api/auth/me", { cookie, body: { name: "" } });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe("invalid_parameter");
  });
});
