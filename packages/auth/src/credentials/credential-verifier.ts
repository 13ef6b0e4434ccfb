import { bearerToken, type Clock } from "@gw/shared";
import { checkKeyAccess, type KeyAccess } from "../api-keys/controls";

/** Who is calling: resolved from an API key or a session cookie. */
export interface Principal {
  userId: string;
  /** set when authenticated by API key */
  keyId?: string;
  /** set when authenticated by API key: its controls (CONTRACT 10) */
  key?: KeyAccess;
  /** set when authenticated by session cookie */
  sessionId?: string;
  emailVerified: boolean;
}

/** API-key verification on the hot path: in-process cache, evicted at once on revoke (and across instances via Redis). */
export interface ApiKeyVerifier {
  /** null when the key is missing, malformed, unknown or revoked */
  verify(rawKey: string): Promise<Principal | null>;
  /** counts a use; written off the request path (batched) */
  recordUse(keyId: string): void;
}

/** The parts of a request the verifier reads (an Express request has them). */
export interface CredentialRequest {
  get(name: string): string | undefined;
  /** the client's address as the per-IP limits see it */
  ip?: string | undefined;
}

/**
 * Why no principal: neither credential was sent (or the cookie names no live session); an Authorization header that
 * is not `Bearer <token>`; a key that is malformed, unknown, revoked or past its rotation grace. Each transport words
 * these its own way.
 */
export type CredentialFailure = "no_credentials" | "malformed_authorization" | "invalid_key";

export type CredentialResult = { ok: true; principal: Principal } | { ok: false; code: CredentialFailure };

export interface VerifyOptions {
  /** CONTRACT 10's expiry and client-address checks of a key (default true) */
  checkAccess?: boolean;
  /** count the key's use (default true) */
  countUse?: boolean;
}

/** Session or API key (SPEC 5), decided once for tRPC, the Express routes and the gateway. */
export interface CredentialVerifier<Req extends CredentialRequest> {
  verify(req: Req, options?: VerifyOptions): Promise<CredentialResult>;
}

export interface CredentialVerifierDeps<Req> {
  keys: ApiKeyVerifier;
  /** the session cookie's principal, null without a live session; its refusals are thrown as AppErrors */
  session: (req: Req) => Promise<Principal | null>;
  clock: Clock;
}

const NO_CREDENTIALS: CredentialResult = { ok: false, code: "no_credentials" };
const MALFORMED_AUTHORIZATION: CredentialResult = { ok: false, code: "malformed_authorization" };
const INVALID_KEY: CredentialResult = { ok: false, code: "invalid_key" };

/**
 * An Authorization header means key authentication (a bad key is not rescued by a cookie); without it, the session
 * cookie. Checks in order: header form, key, expiry, client address (CONTRACT 10). Refusals that read the same on
 * every route are thrown as AppErrors with their message: key_expired, ip_not_allowed, account_suspended, and the
 * session's (session_expired, unauthorized, csrf_rejected). No database round trip for a cached key.
 */
export function createCredentialVerifier<Req extends CredentialRequest>(deps: CredentialVerifierDeps<Req>): CredentialVerifier<Req> {
  return {
    async verify(req, { checkAccess = true, countUse = true } = {}) {
      const header = req.get("authorization");
      if (header === undefined) {
        const principal = await deps.session(req);
        return principal ? { ok: true, principal } : NO_CREDENTIALS;
      }
      const token = bearerToken(header);
      if (!token) return MALFORMED_AUTHORIZATION;
      const principal = await deps.keys.verify(token);
      if (!principal) return INVALID_KEY;
      if (checkAccess && principal.key) checkKeyAccess(principal.key, deps.clock.now(), req.ip);
      if (countUse && principal.keyId) deps.keys.recordUse(principal.keyId);
      return { ok: true, principal };
    },
  };
}
