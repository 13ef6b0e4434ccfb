import type { Logger } from "pino";
import type { Config } from "@gw/config";
import type { Database } from "@gw/db";
import type { Clock } from "@gw/shared";
import { createAccountHooks, type AccountHooks } from "./accounts/account-hooks";
import { createAccountService, type AccountService } from "./accounts/account-service";
import type { LimitConsumer } from "./accounts/auth-limits";
import { createOAuthSignIn } from "./accounts/oauth-sign-in";
import { createMailer } from "./mail/mailer";
import { createOAuthFlow, type OAuthFlow } from "./oauth/oauth-flow";
import { createSessionManager, type SessionManager } from "./sessions/session-manager";
import { createSessionRepository } from "./sessions/session-repository";
import { createOneTimeTokens } from "./tokens/one-time-tokens";
import { createUserRepository, type UserRepository } from "./users/user-repository";

export interface AuthServiceDeps {
  config: Config;
  db: Database;
  clock: Clock;
  logger: Logger;
  limits: LimitConsumer;
  revokeAllKeysForUser: (userId: string) => Promise<unknown>;
}

/** Everything accounts need, built once per app instance. */
export interface AuthServices {
  accounts: AccountService;
  accountHooks: AccountHooks;
  sessions: SessionManager;
  users: UserRepository;
  oauth: OAuthFlow;
}

export async function createAuthServices(deps: AuthServiceDeps): Promise<AuthServices> {
  const { config, db, clock, logger } = deps;
  const connection = db.connection;
  const [users, sessionRepo, tokens] = await Promise.all([
    createUserRepository(connection),
    createSessionRepository(connection),
    createOneTimeTokens(connection, clock),
  ]);
  const sessions = createSessionManager(sessionRepo, clock, {
    secret: config.sessionSecret,
    secure: config.cookieSecure,
    ttlDays: config.sessionTtlDays,
    maxDays: config.sessionMaxDays,
  });
  const hooks = createAccountHooks(logger);
  const accounts = createAccountService({
    users,
    sessions,
    tokens,
    mailer: createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir }, clock, logger),
    limits: deps.limits,
    hooks,
    revokeAllKeysForUser: deps.revokeAllKeysForUser,
    clock,
    logger,
    passwordRules: { minLength: config.passwordMinLength },
    publicUrl: config.publicUrl,
  });
  const oauth = await createOAuthFlow({
    config,
    connection,
    signIn: createOAuthSignIn(users, sessions, clock, logger),
    clock,
    logger,
  });
  return { accounts, accountHooks: hooks, sessions, users, oauth };
}
