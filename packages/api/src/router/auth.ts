import type { Response } from "express";
import { z } from "zod";
import { normalizeEmail, toPublicUser, type User } from "@gw/auth";
import { AppError } from "@gw/shared";
import { setRateLimitHeaders, type RateLimitState } from "@gw/limits";
import { clientLimitAddress } from "../client-address";
import { displayName } from "../display-name";
import { createTRPCRouter, logoutProcedure, publicProcedure, rateLimit, sessionProcedure } from "../trpc";

// SPEC 4.5 / 5, CONTRACT 2. Procedures validate, call one AccountService function and shape the answer.
// DELETE /api/auth/me and the OAuth redirects are Express routes (apps/server/src/auth).

const TAGS = ["Accounts"];

// RFC 5322 dot-atom local part and a host name with a top-level domain, letters and digits of any script, so that
// internationalised addresses (e.g. "josé@exämple.de") are valid and "a@b..c", "a@.", "<x>@y.com" or "a,b@c.com"
// (which a mailer reads as two recipients) are not. zod's unicodeEmail only excluded spaces, quotes and a second @.
const ATEXT = "[\\p{L}\\p{M}\\p{N}!#$%&'*+/=?^_`{|}~-]+";
const LABEL = "[\\p{L}\\p{M}\\p{N}](?:[\\p{L}\\p{M}\\p{N}-]{0,61}[\\p{L}\\p{M}\\p{N}])?";
const emailPattern = new RegExp(`^(?=[^@]{1,64}@)${ATEXT}(?:\\.${ATEXT})*@(?:${LABEL}\\.)+(?:\\p{L}[\\p{L}\\p{M}]+|xn--[a-z0-9-]+)$`, "u");
// one spelling per address (NFC, lower case, IDNA domain): "xn--exmple-cua.de" is exämple.de, not a second account
const normalizedEmail = z.string().overwrite(normalizeEmail).max(254);
const email = normalizedEmail.pipe(z.email({ pattern: emailPattern })).meta({ description: "e-mail address; trimmed and lower-cased", format: "email" });
// login and reset look an address up: accounts made before the stricter rule must stay reachable
// (documented by the looser pattern it applies, after trimming, rather than as `format: email`, which it is not)
const existingEmail = normalizedEmail.pipe(z.email({ pattern: z.regexes.unicodeEmail }))
  .meta({ description: "e-mail address; trimmed and lower-cased", format: undefined, pattern: `^\\s*${z.regexes.unicodeEmail.source.slice(1, -1)}\\s*$` });
// the SPEC 5 rules are applied by the domain so the answer is weak_password naming the rule
const password = z.string().max(1024).describe("at least 8 characters, upper and lower case, a digit, a special character; not a common password");
const name = displayName(100);
const token = z.string().min(1).max(200).describe("the token of the e-mailed link");

const publicUser = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  created_at: z.string().describe("ISO 8601"),
});
const userWithVerification = publicUser.extend({ email_verified: z.boolean() });
const successMessage = z.object({ success: z.literal(true), message: z.string() });

const withVerification = (user: User) => ({ ...toPublicUser(user), email_verified: user.emailVerified });
// the domain counts the SPEC 8 authentication limits; the answer carries where the caller stands
const limitHeadersOn = (res: Response) => ({ onLimit: (state: RateLimitState) => setRateLimitHeaders(res, state) });

export const authRouter = createTRPCRouter({
  signup: publicProcedure
    .meta({
      openapi: { method: "POST", path: "/auth/signup", tags: TAGS, summary: "Register; sends a verification e-mail (no session is created)", successDescription: "Created" },
      successStatus: 201,
      errors: ["weak_password", "account_exists", "auth_rate_limit"],
    })
    .input(z.object({ email, password, name }))
    .output(z.object({ success: z.literal(true), message: z.string(), user: publicUser }))
    .mutation(async ({ ctx, input }) => {
      const user = await ctx.app.auth.accounts.signup(input, { ip: clientLimitAddress(ctx.req), ...limitHeadersOn(ctx.res) });
      return { success: true as const, message: "Account created. Check your e-mail to verify your address.", user: toPublicUser(user) };
    }),

  login: publicProcedure
    .meta({ openapi: { method: "POST", path: "/auth/login", tags: TAGS, summary: "Log in with e-mail and password; sets the session cookie" }, errors: ["invalid_credentials", "account_suspended", "auth_rate_limit"] })
    .input(z.object({ email: existingEmail, password: z.string().max(1024) }))
    .output(z.object({ success: z.literal(true), user: userWithVerification }))
    .mutation(async ({ ctx, input }) => {
      const { user, setCookie } = await ctx.app.auth.accounts.login(input, { ip: clientLimitAddress(ctx.req), ...limitHeadersOn(ctx.res) });
      ctx.res.append("Set-Cookie", setCookie);
      return { success: true as const, user: withVerification(user) };
    }),

  logout: logoutProcedure
    .meta({ openapi: { method: "POST", path: "/auth/logout", tags: TAGS, summary: "Log out: revokes the session and clears the cookie" } })
    .input(z.void())
    .output(successMessage)
    .mutation(async ({ ctx }) => {
      if (ctx.principal.sessionId) await ctx.app.auth.accounts.logout(ctx.principal.sessionId);
      ctx.res.append("Set-Cookie", ctx.app.auth.sessions.clearCookie());
      return { success: true as const, message: "Logged out." };
    }),

  me: sessionProcedure
    .use(rateLimit("authMe", "user"))
    .meta({ openapi: { method: "GET", path: "/auth/me", tags: TAGS, summary: "The logged-in user" } })
    .input(z.void())
    .output(z.object({ user: userWithVerification }))
    .query(async ({ ctx }) => ({ user: withVerification(await ctx.app.auth.accounts.getUser(ctx.principal.userId)) })),

  /**
   * The dashboard's "who is signed in": the user, or null and why (`unauthorized`: no valid session; `session_expired`).
   * Same answer as `me`, but a signed-out page gets a 200, not a 401 the browser logs as a failed request.
   */
  session: publicProcedure
    .use(rateLimit("authMe", "ip"))
    .input(z.void())
    .output(z.object({ user: userWithVerification.nullable(), ended: z.enum(["unauthorized", "session_expired"]).nullable() }))
    .query(async ({ ctx }) => {
      let principal;
      try {
        principal = await ctx.app.sessions.fromRequest(ctx.req);
      } catch (err) {
        if (err instanceof AppError && (err.code === "unauthorized" || err.code === "session_expired")) return { user: null, ended: err.code };
        throw err;
      }
      if (!principal) return { user: null, ended: "unauthorized" as const };
      return { user: withVerification(await ctx.app.auth.accounts.getUser(principal.userId)), ended: null };
    }),

  updateMe: sessionProcedure
    .meta({ openapi: { method: "PATCH", path: "/auth/me", tags: TAGS, summary: "Change the display name" } })
    .input(z.object({ name }))
    .output(z.object({ user: userWithVerification }))
    .mutation(async ({ ctx, input }) => ({ user: withVerification(await ctx.app.auth.accounts.updateName(ctx.principal.userId, input.name)) })),

  /** The dashboard's way to DELETE /api/auth/me (same domain function). */
  deleteAccount: sessionProcedure
    .input(z.object({ password: z.string().max(1024).optional() }))
    .output(successMessage)
    .mutation(async ({ ctx, input }) => {
      await ctx.app.auth.accounts.deleteAccount(ctx.principal.userId, input.password);
      ctx.res.append("Set-Cookie", ctx.app.auth.sessions.clearCookie());
      return { success: true as const, message: "Your account has been deleted." };
    }),

  changePassword: sessionProcedure
    .meta({ openapi: { method: "POST", path: "/auth/change-password", tags: TAGS, summary: "Change the password; signs out every other session" }, errors: ["weak_password", "invalid_credentials"] })
    .input(z.object({ current_password: z.string().max(1024), new_password: password }))
    .output(successMessage)
    .mutation(async ({ ctx, input }) => {
      const setCookie = await ctx.app.auth.accounts.changePassword(ctx.principal.userId, input.current_password, input.new_password);
      ctx.res.append("Set-Cookie", setCookie);
      return { success: true as const, message: "Password changed. Other sessions have been signed out." };
    }),

  verifyEmail: publicProcedure
    .meta({ openapi: { method: "POST", path: "/auth/verify-email", tags: TAGS, summary: "Verify the e-mail address with the token of the e-mailed link" }, errors: ["invalid_token"] })
    .input(z.object({ token }))
    .output(successMessage)
    .mutation(async ({ ctx, input }) => {
      await ctx.app.auth.accounts.verifyEmail(input.token);
      return { success: true as const, message: "E-mail address verified." };
    }),

  resendVerification: sessionProcedure
    .meta({ openapi: { method: "POST", path: "/auth/resend-verification", tags: TAGS, summary: "Send the verification e-mail again" } })
    .input(z.void())
    .output(successMessage)
    .mutation(async ({ ctx }) => {
      const outcome = await ctx.app.auth.accounts.resendVerification(ctx.principal.userId, limitHeadersOn(ctx.res));
      const message = outcome === "sent" ? "Verification e-mail sent." : "Your e-mail address is already verified.";
      return { success: true as const, message };
    }),

  requestPasswordReset: publicProcedure
    .meta({ openapi: { method: "POST", path: "/auth/password-reset", tags: TAGS, summary: "E-mail a password reset link (same answer whether or not the account exists)" }, errors: ["auth_rate_limit"] })
    .input(z.object({ email: existingEmail }))
    .output(successMessage)
    .mutation(async ({ ctx, input }) => {
      await ctx.app.auth.accounts.requestPasswordReset(input.email, limitHeadersOn(ctx.res));
      return { success: true as const, message: "If an account exists for this e-mail, a password reset link has been sent." };
    }),

  confirmPasswordReset: publicProcedure
    .meta({ openapi: { method: "POST", path: "/auth/password-reset/confirm", tags: TAGS, summary: "Set a new password with the reset token; signs out every session" }, errors: ["invalid_token", "weak_password"] })
    .input(z.object({ token, password }))
    .output(successMessage)
    .mutation(async ({ ctx, input }) => {
      await ctx.app.auth.accounts.confirmPasswordReset(input.token, input.password);
      return { success: true as const, message: "Password changed. Please log in with your new password." };
    }),
});
