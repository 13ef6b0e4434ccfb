import { TRPCClientError } from "@trpc/client";
import { formatMoney } from "./format";

/** An error answered by the API, normalised from the spec's nested, flat and status forms. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly extras: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, status: number, extras: Record<string, unknown> = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.extras = extras;
  }
}

// What a user should read for each code; the server's own message is shown when a code is not listed here,
// because it names the parameter or rule that failed (CONTRACT 1).
const FRIENDLY: Record<string, string> = {
  invalid_credentials: "That e-mail and password don't match an account.",
  account_exists: "An account with this e-mail already exists. Try logging in instead.",
  session_expired: "Your session has expired. Please log in again.",
  unauthorized: "Please log in to continue.",
  auth_rate_limit: "Too many attempts. Please wait a while and try again.",
  rate_limit_exceeded: "Too many requests. Please slow down and try again shortly.",
  invalid_token: "This link is invalid, already used or expired. Request a new one.",
  email_not_verified: "Verify your e-mail address first: use the link we sent you (or resend it from the dashboard).",
  insufficient_credits: "Your balance is too low for this request. Add credits on the Billing page.",
  invalid_payment_method: "The payment method was rejected.",
  plan_not_found: "That plan no longer exists.",
  key_not_found: "That key no longer exists (it may already be revoked).",
  csrf_rejected: "The request was blocked because it came from another site.",
  provider_not_configured: "This model's provider is not configured on this gateway.",
  upstream_error: "The model provider failed to answer. You were not charged; please try again.",
  upstream_timeout: "The model provider timed out. You were not charged; please try again.",
  service_unavailable: "The service is temporarily unavailable. Please try again shortly.",
  internal_error: "Something went wrong on our side. Please try again.",
  network_error: "Can't reach the server. Check your connection and try again.",
};

/** Codes whose own server message is more useful than a generic one (they name the parameter or rule). */
const PREFER_SERVER_MESSAGE = new Set([
  "weak_password", "invalid_parameter", "missing_required_parameter", "unsupported_model",
  "content_policy_violation", "payload_too_large", "invalid_json", "model_not_allowed", "conflict",
]);

/** tRPC errors carry the spec's nested error in `data.error` (packages/api errorFormatter). */
function fromTrpc(err: TRPCClientError<never>): ApiError {
  const data = err.data as { httpStatus?: number; error?: { code?: string; message?: string } } | null | undefined;
  const status = data?.httpStatus ?? 0;
  if (data?.error?.code) return toApiError(status, { error: data.error });
  // No body at all: the request never reached the server.
  return new ApiError(status === 0 ? "network_error" : (STATUS_CODES[status] ?? "internal_error"), err.message, status);
}

/** Any thrown value as an ApiError when it came from the API (REST or tRPC); other errors unchanged. */
export function normalizeError(err: unknown): unknown {
  if (err instanceof TRPCClientError) return fromTrpc(err as TRPCClientError<never>);
  return err;
}

/** Per-code wording for one form, where the generic text would mislead (e.g. no e-mail field to blame). */
export type ErrorMessages = Readonly<Partial<Record<string, string>>>;

export function errorMessage(raw: unknown, overrides: ErrorMessages = {}): string {
  const err = normalizeError(raw);
  if (err instanceof ApiError) {
    const override = overrides[err.code];
    if (override) return override;
    if (PREFER_SERVER_MESSAGE.has(err.code) && err.message) return err.message;
    if (err.code === "insufficient_credits" && typeof err.extras.current_balance === "number") {
      // in the one money format: a balance of $0.004 is not "$0.00" (digits under a cent), $1,234.50 has cents
      const needs = typeof err.extras.required_amount === "number" ? `needs up to ${formatMoney(err.extras.required_amount)}, ` : "";
      return `${FRIENDLY.insufficient_credits} (${needs}balance ${formatMoney(err.extras.current_balance)})`;
    }
    return FRIENDLY[err.code] ?? (err.message || "Unexpected error.");
  }
  if (err instanceof Error && err.message) return err.message;
  return "Unexpected error.";
}

// The dashboard never sends an API key, so the gateway's invalid_api_key also means "no session".
const SESSION_LOST = new Set(["session_expired", "unauthorized", "invalid_api_key"]);

/** The code when the error means the browser has no valid session any more, else null. */
export function sessionLossCode(raw: unknown): string | null {
  const err = normalizeError(raw);
  return err instanceof ApiError && SESSION_LOST.has(err.code) ? err.code : null;
}

export function isSessionLost(err: unknown): boolean {
  return sessionLossCode(err) !== null;
}

const STATUS_CODES: Record<number, string> = {
  400: "invalid_parameter", 401: "unauthorized", 402: "insufficient_credits", 403: "csrf_rejected",
  404: "not_found", 409: "conflict", 413: "payload_too_large", 429: "rate_limit_exceeded",
  502: "upstream_error", 503: "service_unavailable", 504: "upstream_timeout",
};

/** Builds an ApiError from any of the spec's error bodies (7.1 nested, flat or status form). */
export function toApiError(status: number, body: unknown): ApiError {
  if (typeof body === "object" && body !== null) {
    const b = body as Record<string, unknown>;
    if (typeof b.error === "object" && b.error !== null) {
      const e = b.error as Record<string, unknown>;
      const { message, code, ...extras } = e;
      return new ApiError(
        typeof code === "string" ? code : (STATUS_CODES[status] ?? "internal_error"),
        typeof message === "string" ? message : "",
        status,
        extras,
      );
    }
    if (typeof b.error === "string") {
      return new ApiError(status === 401 ? "unauthorized" : (STATUS_CODES[status] ?? "internal_error"), b.error, status);
    }
    if (typeof b.error_code === "string") {
      return new ApiError(b.error_code, typeof b.message === "string" ? b.message : "", status);
    }
  }
  return new ApiError(STATUS_CODES[status] ?? "internal_error", "", status);
}
