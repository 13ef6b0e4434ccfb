import { randomBytes } from "node:crypto";
import { AppError, type Clock } from "@gw/shared";
import { initialExpiry, renewedExpiry, type RenewalPolicy } from "./renewal";
import {
  clearCookieHeader, readCookie, sealPayload, SESSION_COOKIE, setCookieHeader, unsealPayload, type CookieSettings,
} from "./session-cookie";
import type { SessionRepository } from "./session-repository";

const DAY_MS = 24 * 60 * 60 * 1000;
const RENEW_INTERVAL_MS = 5 * 60 * 1000;

export interface SessionSettings extends CookieSettings {
  ttlDays: number;
  maxDays: number;
}

export interface AuthenticatedSession {
  userId: string;
  sessionId: string;
  /** set when the session was renewed: the re-issued cookie to send back */
  setCookie?: string;
}

export interface SessionManager {
  /** a fresh session (new id at every login) and the Set-Cookie header that carries it */
  start(userId: string): Promise<{ sessionId: string; setCookie: string }>;
  /**
   * null when the request carries no session cookie. Throws 401 unauthorized for an unreadable, unknown or
   * revoked session and 401 session_expired for one whose lifetime has passed.
   */
  authenticate(cookieHeader: string | undefined): Promise<AuthenticatedSession | null>;
  /** whether the session exists, is not revoked and has not expired (re-checked after a write that needed it) */
  isActive(sessionId: string): Promise<boolean>;
  revoke(sessionId: string): Promise<void>;
  revokeAllForUser(userId: string): Promise<void>;
  clearCookie(): string;
}

const unauthorized = () => new AppError("unauthorized", "Authentication required. Please log in.");
const expired = () => new AppError("session_expired", "Your session has expired. Please log in again.");

// 192 bits: session ids are bearer secrets once unsealed, so they must not be guessable.
const newSessionId = (): string => `ses_${randomBytes(24).toString("base64url")}`;

export function createSessionManager(repo: SessionRepository, clock: Clock, settings: SessionSettings): SessionManager {
  const policy: RenewalPolicy = { ttlMs: settings.ttlDays * DAY_MS, maxMs: settings.maxDays * DAY_MS, minIntervalMs: RENEW_INTERVAL_MS };

  async function cookieFor(sessionId: string, expiresAt: number, now: number): Promise<string> {
    const sealed = await sealPayload({ sid: sessionId, exp: expiresAt }, settings.secret);
    return setCookieHeader(SESSION_COOKIE, sealed, (expiresAt - now) / 1000, settings.secure);
  }

  return {
    async start(userId) {
      const now = clock.now();
      const sessionId = newSessionId();
      const expiresAt = initialExpiry(now, policy);
      await repo.insert({ id: sessionId, userId, createdAt: now, expiresAt, renewedAt: now });
      return { sessionId, setCookie: await cookieFor(sessionId, expiresAt, now) };
    },

    async authenticate(cookieHeader) {
      const sealed = readCookie(cookieHeader, SESSION_COOKIE);
      if (sealed === undefined || sealed === "") return null;
      const payload = await unsealPayload(sealed, settings.secret);
      if (!payload) throw unauthorized();
      const now = clock.now();
      const record = await repo.findById(payload.sid);
      if (!record || record.revokedAt !== undefined) throw unauthorized();
      if (payload.exp <= now || record.expiresAt <= now) throw expired();

      const session: AuthenticatedSession = { userId: record.userId, sessionId: record.id };
      const next = renewedExpiry(record, now, policy);
      if (next !== null) {
        await repo.renew(record.id, next, now);
        session.setCookie = await cookieFor(record.id, next, now);
      }
      return session;
    },

    async isActive(sessionId) {
      const record = await repo.findById(sessionId);
      return record !== null && record.revokedAt === undefined && record.expiresAt > clock.now();
    },

    revoke: (sessionId) => repo.revoke(sessionId, clock.now()),
    revokeAllForUser: (userId) => repo.revokeAllForUser(userId, clock.now()),
    clearCookie: () => clearCookieHeader(SESSION_COOKIE, settings.secure),
  };
}
