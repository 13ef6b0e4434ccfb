import type { Logger } from "pino";
import type { RateLimitState } from "@gw/limits";
import { AppError, type Clock } from "@gw/shared";
import { hashPassword, verifyAgainstDummy, verifyPassword } from "../passwords/hashing";
import { assertStrongPassword, MAX_PASSWORD_LENGTH, type PasswordRules } from "../passwords/policy";
import { passwordResetMail, verificationMail } from "../mail/templates";
import type { Mailer } from "../mail/mailer";
import type { SessionManager } from "../sessions/session-manager";
import type { OneTimeTokens } from "../tokens/one-time-tokens";
import type { UserRepository } from "../users/user-repository";
import type { User } from "../users/user";
import type { AccountHookRunner } from "./account-hooks";
import { consumeAuthLimit, type LimitConsumer } from "./auth-limits";

const HOUR_MS = 60 * 60 * 1000;
const VERIFY_TTL_MS = 24 * HOUR_MS;
const RESET_TTL_MS = HOUR_MS;

export interface AccountServiceDeps {
  users: UserRepository;
  sessions: SessionManager;
  tokens: OneTimeTokens;
  mailer: Mailer;
  limits: LimitConsumer;
  hooks: AccountHookRunner;
  /** the platform's API-key revocation (every key of the user, caches evicted) */
  revokeAllKeysForUser: (userId: string) => Promise<unknown>;
  clock: Clock;
  logger: Logger;
  passwordRules: PasswordRules;
  publicUrl: string;
}

/** Who is asking, for the per-IP limits. */
export interface RequestOrigin {
  ip: string;
  /** told where the request's SPEC 8 limit stands once counted, so the answer can carry X-RateLimit-* */
  onLimit?: (state: RateLimitState) => void;
}

/** The limit-reporting part of an origin, for requests limited per e-mail or account rather than per IP. */
export type LimitObserver = Pick<RequestOrigin, "onLimit">;

export interface LoginResult {
  user: User;
  setCookie: string;
}

export interface AccountService {
  signup(input: { email: string; password: string; name: string }, origin: RequestOrigin): Promise<User>;
  login(input: { email: string; password: string }, origin: RequestOrigin): Promise<LoginResult>;
  logout(sessionId: string): Promise<void>;
  getUser(userId: string): Promise<User>;
  updateName(userId: string, name: string): Promise<User>;
  /** revokes every session and returns the cookie of a fresh one for the caller */
  changePassword(userId: string, currentPassword: string, newPassword: string): Promise<string>;
  deleteAccount(userId: string, password: string | undefined): Promise<void>;
  verifyEmail(token: string): Promise<void>;
  resendVerification(userId: string, observer?: LimitObserver): Promise<"sent" | "already_verified">;
  requestPasswordReset(email: string, observer?: LimitObserver): Promise<void>;
  confirmPasswordReset(token: string, password: string): Promise<void>;
}

const invalidCredentials = () => new AppError("invalid_credentials", "Invalid e-mail or password.");
export const accountSuspended = () => new AppError("account_suspended", "This account is suspended. Contact the operator of this gateway.");
const unauthorized = () => new AppError("unauthorized", "Authentication required. Please log in.");

export function createAccountService(deps: AccountServiceDeps): AccountService {
  const { users, sessions, tokens, mailer, clock, logger } = deps;
  const now = () => new Date(clock.now());

  /** A live (not deleted) user, else 401: a session can outlive its deleted owner by one request at most. */
  async function liveUser(userId: string): Promise<User> {
    const user = await users.findById(userId);
    if (!user || user.deletedAt) throw unauthorized();
    return user;
  }

  /**
   * Checks a signed-in user's password under the per-account login throttle: a stolen session must not make
   * change-password or account deletion an unthrottled password oracle, so failures share login's budget.
   */
  async function confirmPassword(user: User, password: string, wrong: () => AppError): Promise<void> {
    const accountKey = `account:${user.email}`;
    await consumeAuthLimit(deps.limits, "loginAccount", accountKey);
    if (!user.passwordHash || !(await verifyPassword(user.passwordHash, password))) throw wrong();
    await deps.limits.refund("loginAccount", accountKey);
  }

  /** Mail failures are logged, never turned into a failed sign-up: the user can ask for a new link. */
  async function sendMail(send: () => Promise<void>, what: string): Promise<void> {
    try {
      await send();
    } catch (err) {
      logger.error({ err }, `could not send ${what} mail`);
    }
  }

  async function sendVerification(user: User): Promise<void> {
    const token = await tokens.issue("verify_email", user.id, VERIFY_TTL_MS);
    const link = `${deps.publicUrl}/verify-email?token=${encodeURIComponent(token)}`;
    await sendMail(() => mailer.send(verificationMail(user.email, user.name, link)), "verification");
  }

  return {
    async signup(input, origin) {
      origin.onLimit?.(await consumeAuthLimit(deps.limits, "register", `ip:${origin.ip}`));
      assertStrongPassword(input.password, deps.passwordRules);
      const user = await users.create({
        email: input.email,
        name: input.name,
        passwordHash: await hashPassword(input.password),
        createdAt: now(),
      });
      await sendVerification(user);
      return user;
    },

    async login(input, origin) {
      origin.onLimit?.(await consumeAuthLimit(deps.limits, "loginIp", `ip:${origin.ip}`));
      // per-account throttle: failures are counted, and once over the window's budget every attempt on this account
      // waits for the window to pass (429 + Retry-After), so its owner is slowed, never locked out for good
      // The attempt is counted before the password is checked and given back when it was right: checked first and
      // counted only after a failure, attempts in flight at the same time all passed a spent budget.
      const accountKey = `account:${input.email}`;
      await consumeAuthLimit(deps.limits, "loginAccount", accountKey);
      const user = input.password.length <= MAX_PASSWORD_LENGTH ? await users.findByEmail(input.email) : null;
      const ok = user?.passwordHash
        ? await verifyPassword(user.passwordHash, input.password)
        : await verifyAgainstDummy(input.password.slice(0, MAX_PASSWORD_LENGTH));
      if (!user || !ok) throw invalidCredentials();
      await deps.limits.refund("loginAccount", accountKey);
      // told only to whoever knows the password: the suspension is no secret to its owner
      if (user.suspendedAt) throw accountSuspended();
      const { sessionId, setCookie } = await sessions.start(user.id);
      // A password reset or change that lands while this login checks the old password revokes every session
      // before this one exists. Read again: a changed password means the one given here is stale.
      const current = await users.findById(user.id);
      if (!current || current.deletedAt || current.passwordHash !== user.passwordHash) {
        await sessions.revoke(sessionId);
        throw invalidCredentials();
      }
      // a suspension that landed meanwhile revoked the sessions before this one existed
      if (current.suspendedAt) {
        await sessions.revoke(sessionId);
        throw accountSuspended();
      }
      return { user: current, setCookie };
    },

    logout: (sessionId) => sessions.revoke(sessionId),

    getUser: liveUser,

    async updateName(userId, name) {
      await liveUser(userId);
      await users.setName(userId, name);
      return liveUser(userId);
    },

    async changePassword(userId, currentPassword, newPassword) {
      const user = await liveUser(userId);
      await confirmPassword(user, currentPassword, () => new AppError("invalid_credentials", "The current password is not correct."));
      assertStrongPassword(newPassword, deps.passwordRules, "new password");
      // A password reset or change that lands while this one checks the current password wins: the password given
      // here is stale then, so nothing is written and no session is kept (as for a login, which see).
      const stale = () => new AppError("invalid_credentials", "The current password is not correct.");
      const passwordHash = await hashPassword(newPassword);
      if (!user.passwordHash || !(await users.setPasswordHash(userId, passwordHash, now(), user.passwordHash))) throw stale();
      // every other device is signed out; the caller continues in a fresh session
      await sessions.revokeAllForUser(userId);
      const { sessionId, setCookie } = await sessions.start(userId);
      const current = await users.findById(userId);
      if (!current || current.deletedAt || current.passwordHash !== passwordHash) {
        await sessions.revoke(sessionId);
        throw stale();
      }
      return setCookie;
    },

    async deleteAccount(userId, password) {
      const user = await liveUser(userId);
      if (user.passwordHash) {
        if (password === undefined || password === "") throw new AppError("missing_required_parameter", "Missing required parameter: 'password'.");
        await confirmPassword(user, password, () => new AppError("invalid_credentials", "The password is not correct."));
      }
      // sessions and keys first: whatever fails later, the account can no longer be used. Sessions before keys, so a
      // key creation already past its session check either stores its key before this revocation or finds its
      // session revoked afterwards (ApiKeyManager.create).
      await sessions.revokeAllForUser(userId);
      await deps.revokeAllKeysForUser(userId);
      await deps.hooks.accountDeleted(userId);
      await users.anonymize(userId, now());
      logger.info({ userId }, "account deleted");
    },

    async verifyEmail(token) {
      const { userId } = await tokens.consume("verify_email", token);
      const user = await users.findById(userId);
      if (!user || user.deletedAt) throw new AppError("invalid_token", "The token is invalid, expired or already used.");
      await users.markEmailVerified(userId, now());
    },

    async resendVerification(userId, observer) {
      const user = await liveUser(userId);
      if (user.emailVerified) return "already_verified";
      observer?.onLimit?.(await consumeAuthLimit(deps.limits, "passwordReset", `verify:${user.id}`));
      await sendVerification(user);
      return "sent";
    },

    async requestPasswordReset(email, observer) {
      observer?.onLimit?.(await consumeAuthLimit(deps.limits, "passwordReset", `email:${email}`));
      const user = await users.findByEmail(email);
      // unknown e-mails get the same answer; only a real account receives a mail
      if (!user || user.deletedAt) return;
      // ...and as soon: the token and the mail are made after the answer, so its timing does not tell (an SMTP
      // round trip made a real account's answer slower, which let anyone test addresses for accounts)
      void sendMail(async () => {
        const token = await tokens.issue("password_reset", user.id, RESET_TTL_MS);
        const link = `${deps.publicUrl}/reset-password?token=${encodeURIComponent(token)}`;
        await mailer.send(passwordResetMail(user.email, link));
      }, "password reset");
    },

    async confirmPasswordReset(token, password) {
      // a weak new password must not use the token up, so the rules are checked before consuming it
      const issued = await tokens.peek("password_reset", token);
      assertStrongPassword(password, deps.passwordRules);
      const user = await users.findById(issued.userId);
      const invalid = new AppError("invalid_token", "The token is invalid, expired or already used.");
      // a token issued before the last password change is stale
      if (!user || user.deletedAt || (user.passwordChangedAt && user.passwordChangedAt > issued.createdAt)) throw invalid;
      await tokens.consume("password_reset", token);
      await users.setPasswordHash(user.id, await hashPassword(password), now());
      await sessions.revokeAllForUser(user.id);
      // a reset proves control of the mailbox
      if (!user.emailVerified) await users.markEmailVerified(user.id, now());
      // and ends the login throttle others' wrong guesses put on the account: otherwise anyone knowing the e-mail
      // could keep its owner out, new password and all, by renewing the lock every window (CONTRACT 2)
      await deps.limits.reset("loginAccount", `account:${user.email}`);
    },
  };
}
