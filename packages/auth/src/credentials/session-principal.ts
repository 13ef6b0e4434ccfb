import { AppError } from "@gw/shared";
import type { SessionManager } from "../sessions/session-manager";
import type { UserRepository } from "../users/user-repository";
import type { Principal } from "./credential-verifier";

/** A session's principal, and the re-issued cookie when the session slid forward. */
export interface SessionPrincipal {
  principal: Principal;
  setCookie?: string;
}

/**
 * The session cookie → its account's principal; null without a session cookie. Throws the session's refusals
 * (401 unauthorized, session_expired), 401 unauthorized for a deleted account and 403 account_suspended.
 */
export async function sessionPrincipal(
  auth: { sessions: SessionManager; users: UserRepository },
  cookieHeader: string | undefined,
): Promise<SessionPrincipal | null> {
  const session = await auth.sessions.authenticate(cookieHeader);
  if (!session) return null;
  const user = await auth.users.findById(session.userId);
  if (!user || user.deletedAt) throw new AppError("unauthorized", "Authentication required. Please log in.");
  // a suspension revokes every session; one that a login raced in is refused here
  if (user.suspendedAt) throw new AppError("account_suspended", "This account is suspended. Contact the operator of this gateway.");
  return { principal: { userId: user.id, sessionId: session.sessionId, emailVerified: user.emailVerified }, setCookie: session.setCookie };
}
