import { sealData, unsealData } from "iron-session";
import { setCookieHeader } from "../sessions/session-cookie";
import type { OAuthProvider } from "./providers";

export const OAUTH_STATE_COOKIE = "gw_oauth";
/** Long enough to pick an account at the provider, short enough that a leaked state is soon useless. */
export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000;

/** The state cookie names the provider, so one callback URL serves both. */
export interface OAuthState {
  provider: OAuthProvider;
  state: string;
  codeVerifier: string;
  /** epoch milliseconds */
  exp: number;
}

export const sealState = (state: OAuthState, secret: string): Promise<string> => sealData(state, { password: secret, ttl: 0 });

export async function unsealState(sealed: string, secret: string): Promise<OAuthState | null> {
  try {
    const data = await unsealData<Partial<OAuthState>>(sealed, { password: secret, ttl: 0 });
    if ((data.provider !== "google" && data.provider !== "github") || typeof data.state !== "string"
      || typeof data.codeVerifier !== "string" || typeof data.exp !== "number") return null;
    return { provider: data.provider, state: data.state, codeVerifier: data.codeVerifier, exp: data.exp };
  } catch {
    return null;
  }
}

export const stateCookieHeader = (sealed: string, secure: boolean): string =>
  setCookieHeader(OAUTH_STATE_COOKIE, sealed, OAUTH_STATE_TTL_MS / 1000, secure);

export const clearStateCookieHeader = (secure: boolean): string => setCookieHeader(OAUTH_STATE_COOKIE, "", 0, secure);
