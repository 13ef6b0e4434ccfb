import type { Logger } from "pino";
import { isAppError, VISIBLE_CHARACTER, type Clock } from "@gw/shared";
import { OAuthFlowError, type OAuthProfile, type OAuthProvider } from "../oauth/providers";
import type { SessionManager } from "../sessions/session-manager";
import { normalizeEmail } from "../users/email";
import type { User } from "../users/user";
import type { UserRepository } from "../users/user-repository";

export interface OAuthSignIn {
  /** finds, links or creates the user of a provider profile and starts a session; returns the Set-Cookie */
  signIn(provider: OAuthProvider, profile: OAuthProfile): Promise<{ user: User; setCookie: string }>;
}

/** One @, a dotted domain, no spaces or control characters: what a provider's address must be to become an account's. */
const USABLE_EMAIL = /^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;

/**
 * The provider's display name under the sign-up rules (no control characters, something visible, at most 100
 * characters); without a usable one, the address's local part.
 */
function accountName(providerName: string, email: string): string {
  const cleaned = providerName.replace(/\p{Cc}+/gu, " ").replace(/\s+/g, " ").trim();
  const name = VISIBLE_CHARACTER.test(cleaned) ? cleaned : (email.split("@")[0] ?? "");
  return [...name].slice(0, 100).join("").trim();
}

export function createOAuthSignIn(users: UserRepository, sessions: SessionManager, clock: Clock, logger: Logger): OAuthSignIn {
  async function resolveUser(provider: OAuthProvider, profile: OAuthProfile, again = false): Promise<User> {
    const known = await users.findByProviderId(provider, profile.providerId);
    const now = new Date(clock.now());
    if (known && !known.deletedAt) {
      // created while the provider did not vouch for the address, and now it does: verified like a new account would be
      if (!known.emailVerified && profile.emailVerified && profile.email && normalizeEmail(profile.email) === known.email) {
        await users.markEmailVerified(known.id, now);
        return { ...known, emailVerified: true };
      }
      return known;
    }
    if (!profile.email) throw new OAuthFlowError("email_unavailable", "The provider did not share an e-mail address.");
    const email = normalizeEmail(profile.email);
    if (email.length > 254 || !USABLE_EMAIL.test(email)) throw new OAuthFlowError("email_unavailable", "The provider did not share a usable e-mail address.");
    const existing = await users.findByEmail(email);
    if (existing) {
      // linking by e-mail is only safe when the provider vouches for the address
      if (!profile.emailVerified) throw new OAuthFlowError("account_exists", "An account with this e-mail already exists.");
      await users.linkProvider(existing.id, provider, profile.providerId, now);
      // never verified: whoever signed it up had not proved the address, so their password, identity and sessions are gone
      if (!existing.emailVerified) await sessions.revokeAllForUser(existing.id);
      logger.info({ userId: existing.id, provider }, "oauth identity linked to existing account");
      return existing;
    }
    try {
      return await users.create({
        email,
        name: accountName(profile.name, email),
        ...(provider === "google" ? { googleId: profile.providerId } : { githubId: profile.providerId }),
        ...(profile.emailVerified ? { emailVerifiedAt: now } : {}),
        createdAt: now,
      });
    } catch (err) {
      // a first sign-in of the same person racing this one (two devices, or Google and GitHub at once) created the
      // account a moment ago: resolved again, it is found (or linked, under the rules above)
      if (!(isAppError(err) && err.code === "account_exists")) throw err;
      if (again) throw new OAuthFlowError("account_exists", "An account with this e-mail already exists.");
      return resolveUser(provider, profile, true);
    }
  }

  return {
    async signIn(provider, profile) {
      const user = await resolveUser(provider, profile);
      if (user.suspendedAt) throw new OAuthFlowError("account_suspended", "This account is suspended.");
      const { setCookie } = await sessions.start(user.id);
      return { user, setCookie };
    },
  };
}
