import type { LimitName } from "@gw/config";
import type { RateLimits, RateLimitState } from "@gw/limits";
import { AppError, isAppError } from "@gw/shared";

/** The slice of the platform's rate-limit service (ctx.limits) that accounts use. */
export type LimitConsumer = Pick<RateLimits, "consume" | "reset" | "refund">;

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

export const consumeAuthLimit = (limits: LimitConsumer, name: LimitName, key: string): Promise<RateLimitState> =>
  asAuthLimit(() => limits.consume(name, key));
