import type { Logger } from "pino";

export type AccountDeletedHook = (userId: string) => Promise<void> | void;

/**
 * Other features react to account events here without the accounts code knowing them
 * (billing registers the cancellation of the Stripe subscription).
 */
export interface AccountHooks {
  onAccountDeleted(hook: AccountDeletedHook): void;
}

export interface AccountHookRunner extends AccountHooks {
  /** runs every hook; one failing hook is logged and does not stop the others or the deletion */
  accountDeleted(userId: string): Promise<void>;
}

export function createAccountHooks(logger: Logger): AccountHookRunner {
  const deleted: AccountDeletedHook[] = [];
  return {
    onAccountDeleted(hook) {
      deleted.push(hook);
    },
    async accountDeleted(userId) {
      for (const hook of deleted) {
        try {
          await hook(userId);
        } catch (err) {
          logger.error({ err, userId }, "account-deleted hook failed");
        }
      }
    },
  };
}
