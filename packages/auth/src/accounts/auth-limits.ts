import type { LimitName } from "@gw/config";
import { AppError, isAppError } from "@gw/shared";

/** The slice of the platform's rate-limit service accounts need (ctx.limits). */
export interface LimitConsumer {
  /** counts one hit; throws AppError 429 with retryAfterSeconds when the window is exhausted */
  consume(name: LimitName, key: string): Promise<unknown>;
}

/** Authentication limits answer auth_rate_limit (SPEC 7.2) rather than the generic rate_limit_exceeded. */
export async function consumeAuthLimit(limits: LimitConsumer, name: LimitName, key: string): Promise<void> {
  try {
    await limits.consume(name, key);
  } catch (err) {
    if (isAppError(err) && (err.code === "rate_limit_exceeded" || err.code === "auth_rate_limit")) {
      throw new AppError("auth_rate_limit", "Too many authentication attempts. Please try again later.", {
        retryAfterSeconds: err.extras.retryAfterSeconds,
      });
    }
    throw err;
  }
}
