export { createAuthServices, type AuthServiceDeps, type AuthServices } from "./create-auth-services";
export type { AccountService, LoginResult, RequestOrigin } from "./accounts/account-service";
export type { AccountDeletedHook, AccountHooks } from "./accounts/account-hooks";
export type { LimitConsumer } from "./accounts/auth-limits";
export type { OAuthFlow, OAuthRedirect, CallbackQuery } from "./oauth/oauth-flow";
export { OAUTH_STATE_COOKIE } from "./oauth/state-cookie";
export { SESSION_COOKIE, readCookie } from "./sessions/session-cookie";
export type { AuthenticatedSession, SessionManager } from "./sessions/session-manager";
export { MAX_PASSWORD_LENGTH } from "./passwords/policy";
export { normalizeEmail } from "./users/email";
export { toPublicUser, type PublicUser, type User } from "./users/user";
export {
  createCredentialVerifier,
  type ApiKeyVerifier, type CredentialFailure, type CredentialRequest, type CredentialResult, type CredentialVerifier, type Principal, type VerifyOptions,
} from "./credentials/credential-verifier";
export { sessionPrincipal, type SessionPrincipal } from "./credentials/session-principal";
export { ApiKeyService, NO_CONTROLS, checkKeyModel, generateApiKey, localRevocationBus, parseIpOrCidr, redisRevocationBus } from "./api-keys/index";
export type { ApiKeyManager, ApiKeySummary, KeyControls } from "./api-keys/index";
export { KEY_PREFIX_LENGTH } from "./api-keys/key-format";
export { createMailer } from "./mail/mailer";
