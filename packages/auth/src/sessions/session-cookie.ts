import { parseCookie, stringifySetCookie } from "cookie";
import { sealData, unsealData } from "iron-session";

export const SESSION_COOKIE = "gw_session";

/** What the sealed cookie carries: the server-side session id and the expiry it was issued with. */
export interface SessionCookiePayload {
  sid: string;
  /** epoch milliseconds */
  exp: number;
}

export interface CookieSettings {
  secret: string;
  secure: boolean;
}

// Expiry is checked against the app's injectable clock from the payload, so iron's own wall-clock ttl is off.
export const sealPayload = (payload: SessionCookiePayload, secret: string): Promise<string> =>
  sealData(payload, { password: secret, ttl: 0 });

/** The payload, or null when the value was not sealed by us (tampered, foreign, or another secret). */
export async function unsealPayload(sealed: string, secret: string): Promise<SessionCookiePayload | null> {
  try {
    const data = await unsealData<Partial<SessionCookiePayload>>(sealed, { password: secret, ttl: 0 });
    if (typeof data.sid !== "string" || typeof data.exp !== "number") return null;
    return { sid: data.sid, exp: data.exp };
  } catch {
    return null;
  }
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  return parseCookie(header)[name];
}

/** A Set-Cookie value: HttpOnly, SameSite=Lax, Path=/, Secure unless COOKIE_SECURE=false (CONTRACT 2). */
export function setCookieHeader(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return stringifySetCookie(name, value, {
    httpOnly: true,
    sameSite: "lax",
    secure,
    path: "/",
    maxAge: Math.max(0, Math.floor(maxAgeSeconds)),
  });
}

export const clearCookieHeader = (name: string, secure: boolean): string => setCookieHeader(name, "", 0, secure);
