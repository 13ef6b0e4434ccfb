import type { Logger } from "pino";
import type { Clock } from "@gw/shared";
import { OAuthFlowError, type OAuthProfile, type OAuthProvider } from "../oauth/providers";
import type { SessionManager } from "../sessions/session-manager";
import type { User } from "../users/user";
import type { UserRepository } from "../users/user-repository";

export interface OAuthSignIn {
  /** finds, links or creates the user of a provider profile and starts a session; returns the Set-Cookie */
  signIn(provider: OAuthProvider, profile: OAuthProfile): Promise<{ user: User; setCookie: string }>;
}

const normalizeEmail = (email: string): string => email.trim().normalize("NFC").toLowerCase();

export function createOAuthSignIn(users: UserRepository, sessions: SessionManager, clock: Clock, logger: Logger): OAuthSignIn {
  async function resolveUser(provider: OAuthProvider, profile: OAuthProfile): Promise<User> {
    const known = await users.findByProviderId(provider, profile.providerId);
    if (known && !known.deletedAt) return known;
    if (!profile.email) throw new OAuthFlowError("email_unavailable", "The provider did not share an e-mail address.");
    const email = normalizeEmail(profile.email);
    const now = new Date(clock.now());
    const existing = await users.findByEmail(email);
    if (existing) {
      // linking by e-mail is only safe when the provider vouches for the address
      if (!profile.emailVerified) throw new OAuthFlowError("account_exists", "An account with this e-mail already exists.");
      await users.linkProvider(existing.id, provider, profile.providerId, now);
      // never verified: whoever signed it up had not proved the address, so their password is gone and their sessions too
      if (!existing.emailVerified) await sessions.revokeAllForUser(existing.id);
      logger.info({ userId: existing.id, provider }, "oauth identity linked to existing account");
      return existing;
    }
    return users.create({
      email,
      name: profile.name.slice(0, 100),
      ...(provider === "google" ? { googleId: profile.providerId } : { githubId: profile.providerId }),
      ...(profile.emailVerified ? { emailVerifiedAt: now } : {}),
      createdAt: now,
    });
  }

  return {
    async signIn(provider, profile) {
      const user = await resolveUser(provider, profile);
      const { setCookie } = await sessions.start(user.id);
      return { user, setCookie };
    },
  };
}
