import { Schema, type Connection } from "mongoose";
import { generateCodeVerifier, generateState } from "arctic";
import type { Logger } from "pino";
import type { Config } from "@gw/config";
import type { Clock } from "@gw/shared";
import type { OAuthSignIn } from "../accounts/oauth-sign-in";
import { isDuplicateKey, modelOn } from "@gw/db";
import { hashToken } from "../tokens/token-crypto";
import { authorizationUrl, exchangeCode, fetchProfile, isOAuthProvider, OAuthFlowError } from "./providers";
import { clearStateCookieHeader, OAUTH_STATE_TTL_MS, sealState, stateCookieHeader, unsealState } from "./state-cookie";

/** Where to send the browser, and the cookies to set on the way. */
export interface OAuthRedirect {
  location: string;
  setCookies: string[];
}

export interface CallbackQuery {
  code?: string;
  state?: string;
  error?: string;
}

export interface OAuthFlow {
  begin(provider: string): Promise<OAuthRedirect>;
  /** never throws: every failure is a redirect to /login?error=<code> */
  complete(query: CallbackQuery, sealedState: string | undefined): Promise<OAuthRedirect>;
}

export interface OAuthFlowDeps {
  config: Pick<Config, "oauth" | "publicUrl" | "sessionSecret" | "cookieSecure">;
  connection: Connection;
  signIn: OAuthSignIn;
  clock: Clock;
  logger: Logger;
}

interface StateUseDoc {
  _id: string;
  usedAt: Date;
}

export const DASHBOARD_PATH = "/dashboard";
const loginWithError = (code: string): string => `/login?error=${encodeURIComponent(code)}`;

export async function createOAuthFlow(deps: OAuthFlowDeps): Promise<OAuthFlow> {
  const { config, clock, logger } = deps;
  const redirectUri = `${config.publicUrl}/api/auth/callback`;
  // a state is accepted once: the insert on its hash is the guard, atomic under concurrency
  const stateUses = modelOn(deps.connection, "OAuthStateUse", () => new Schema<StateUseDoc>({
    _id: String,
    usedAt: { type: Date, required: true },
  }, { collection: "oauth_state_uses", versionKey: false }));
  await stateUses.init();

  const fail = (code: string): OAuthRedirect => ({ location: loginWithError(code), setCookies: [clearStateCookieHeader(config.cookieSecure)] });

  // A used state need only be remembered while its sealed cookie could still be accepted (its `exp`): older uses are
  // pruned, at most once a state lifetime, in the background (FerretDB has no TTL indexes).
  let prunedAt = clock.now();
  function pruneStateUses(): void {
    const now = clock.now();
    if (now - prunedAt < OAUTH_STATE_TTL_MS) return;
    prunedAt = now;
    // the driver's own collection: mongoose's sanitizeFilter would refuse the operator
    stateUses.collection.deleteMany({ usedAt: { $lt: new Date(now - OAUTH_STATE_TTL_MS) } })
      .catch((err: unknown) => logger.warn({ err }, "pruning used oauth states failed"));
  }

  async function consumeState(state: string): Promise<boolean> {
    try {
      await stateUses.create({ _id: hashToken(state), usedAt: new Date(clock.now()) });
      pruneStateUses();
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  return {
    async begin(provider) {
      if (!isOAuthProvider(provider)) return fail("unsupported_provider");
      const providerConfig = config.oauth[provider];
      if (!providerConfig.clientId) return fail("provider_not_configured");
      const state = generateState();
      const codeVerifier = generateCodeVerifier();
      const url = authorizationUrl(provider, providerConfig, redirectUri, state, codeVerifier);
      const sealed = await sealState({ provider, state, codeVerifier, exp: clock.now() + OAUTH_STATE_TTL_MS }, config.sessionSecret);
      return { location: url.toString(), setCookies: [stateCookieHeader(sealed, config.cookieSecure)] };
    },

    async complete(query, sealedState) {
      const saved = sealedState ? await unsealState(sealedState, config.sessionSecret) : null;
      if (!saved || !query.state || saved.state !== query.state || saved.exp <= clock.now()) return fail("invalid_state");
      if (query.error) return fail(query.error === "access_denied" ? "access_denied" : "oauth_failed");
      if (!query.code) return fail("missing_code");
      if (!(await consumeState(saved.state))) return fail("invalid_state");
      const providerConfig = config.oauth[saved.provider];
      try {
        const accessToken = await exchangeCode(providerConfig, redirectUri, query.code, saved.codeVerifier);
        const profile = await fetchProfile(saved.provider, providerConfig, accessToken);
        const { setCookie } = await deps.signIn.signIn(saved.provider, profile);
        return { location: DASHBOARD_PATH, setCookies: [clearStateCookieHeader(config.cookieSecure), setCookie] };
      } catch (err) {
        if (err instanceof OAuthFlowError) {
          logger.warn({ provider: saved.provider, code: err.code, reason: err.message }, "oauth sign-in failed");
          return fail(err.code);
        }
        logger.error({ err, provider: saved.provider }, "oauth sign-in failed unexpectedly");
        return fail("server_error");
      }
    },
  };
}
