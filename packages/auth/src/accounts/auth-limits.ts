import type { LimitName } from "@gw/config";
import { AppError, isAppError } from "@gw/shared";

/** The slice of the platform's rate-limit service (ctx.limits) that accounts use. */
export interface LimitConsumer {
  /** counts one hit; throws AppError 429 with retryAfterSeconds when the window is exhausted */
  consume(name: LimitName, key: string): Promise<unknown>;
  /** throws like consume when the key is already over the limit, without counting */
  check(name: LimitName, key: string): Promise<unknown>;
}

/** Authentication limits answer auth_rate_limit (SPEC 7.2), never the generic rate_limit_exceeded. */
async function asAuthLimit(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (isAppError(err) && err.code === "rate_limit_exceeded") {
      throw new AppError("auth_rate_limit", "Too many authentication attempts. Please try again later.", err.extras);
    }
    throw err;
  }
}

export const consumeAuthLimit = (limits: LimitConsumer, name: LimitName, key: string): Promise<void> =>
  asAuthLimit(() => limits.consume(name, key));

export const checkAuthLimit = (limits: LimitConsumer, name: LimitName, key: string): Promise<void> =>
  asAuthLimit(() => limits.check(name, key));
