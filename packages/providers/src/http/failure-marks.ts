// What an upstream failure was, kept beside the AppError it became: the router cools a deployment down on 429, 5xx,
// timeouts and connection errors (CONTRACT 13) and reads an upstream 404 as a model name the provider does not know.
import { AppError } from "@gw/shared";

/** An upstream HTTP status, or a connection that could not be made or broke off. */
export type FailureCause = number | "connection";

const causes = new WeakMap<AppError, FailureCause>();

export function markFailure<E extends AppError>(err: E, cause: FailureCause): E {
  causes.set(err, cause);
  return err;
}

/** Passes a mark on to an error made from another (StreamInterruptedError from its cause). */
export function copyFailure(from: AppError, to: AppError): void {
  const cause = causes.get(from);
  if (cause !== undefined) causes.set(to, cause);
}

/** The failure's cause: its upstream status, a connection failure, a timeout, or undefined (anything else). */
export function failureCause(err: unknown): FailureCause | "timeout" | undefined {
  if (!(err instanceof AppError)) return undefined;
  if (err.code === "upstream_timeout") return "timeout";
  return causes.get(err);
}
