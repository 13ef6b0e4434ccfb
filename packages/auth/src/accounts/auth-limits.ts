import type { LimitName } from "@gw/config";
import { AppError, isAppError } from "@gw/shared";

/** Where one limit stands for one caller after a counted hit (for X-RateLimit-* headers). */
export interface LimitState {
  limit: number;
  remaining: number;
  /** ms epoch when the window resets */
  resetAt: number;
}

/** The slice of the platform's rate-limit service (ctx.limits) that accounts use. */
export interface LimitConsumer {
  /** counts one hit; throws AppError 429 with retryAfterSeconds when the window is exhausted */
  consume(name: LimitName, key: string): Promise<LimitState>;
  /** forgets what was counted for the key */
  reset(name: LimitName, key: string): Promise<void>;
  /** gives back one hit counted for the key */
  refund(name: LimitName, key: string): Promise<void>;
}

/** Authentication limits answer auth_rate_limit (SPEC 7.2), never the generic rate_limit_exceeded. */
async function asAuthLimit<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isAppError(err) && err.code === "rate_limit_exceeded") {
      throw new AppError("auth_rate_limit", "Too many authentication attempts. Please try again later.", err.extras);
    }
    throw err;
  }
}

export const consumeAuthLimit = (limits: LimitConsumer, name: LimitName, key: string): Promise<LimitState> =>
  asAuthLimit(() => limits.consume(name, key));
