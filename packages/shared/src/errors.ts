// The spec's error codes (SPEC 7.2, CONTRACT 1): type and HTTP status per code, in one table.

export const ERROR_CODES = {
  missing_required_parameter: { type: "invalid_request_error", status: 400 },
  invalid_parameter: { type: "invalid_request_error", status: 400 },
  invalid_json: { type: "invalid_request_error", status: 400 },
  weak_password: { type: "invalid_request_error", status: 400 },
  unsupported_model: { type: "invalid_request_error", status: 400 },
  content_policy_violation: { type: "invalid_request_error", status: 400 },
  invalid_token: { type: "invalid_request_error", status: 400 },
  unauthorized: { type: "authentication_error", status: 401 },
  invalid_api_key: { type: "authentication_error", status: 401 },
  invalid_credentials: { type: "authentication_error", status: 401 },
  key_expired: { type: "authentication_error", status: 401 },
  session_expired: { type: "authentication_error", status: 401 },
  insufficient_credits: { type: "insufficient_credits_error", status: 402 },
  key_limit_exceeded: { type: "insufficient_credits_error", status: 402 },
  invalid_payment_method: { type: "payment_error", status: 402 },
  email_not_verified: { type: "permission_error", status: 403 },
  csrf_rejected: { type: "permission_error", status: 403 },
  ip_not_allowed: { type: "permission_error", status: 403 },
  model_not_allowed: { type: "permission_error", status: 403 },
  plan_not_found: { type: "not_found_error", status: 404 },
  key_not_found: { type: "not_found_error", status: 404 },
  not_found: { type: "not_found_error", status: 404 },
  method_not_allowed: { type: "invalid_request_error", status: 405 },
  request_timeout: { type: "invalid_request_error", status: 408 },
  account_exists: { type: "registration_error", status: 409 },
  conflict: { type: "invalid_request_error", status: 409 },
  payload_too_large: { type: "invalid_request_error", status: 413 },
  unsupported_media_type: { type: "invalid_request_error", status: 415 },
  expectation_failed: { type: "invalid_request_error", status: 417 },
  rate_limit_exceeded: { type: "rate_limit_error", status: 429 },
  auth_rate_limit: { type: "rate_limit_error", status: 429 },
  headers_too_large: { type: "invalid_request_error", status: 431 },
  internal_error: { type: "api_error", status: 500 },
  upstream_error: { type: "api_error", status: 502 },
  provider_not_configured: { type: "api_error", status: 503 },
  service_unavailable: { type: "api_error", status: 503 },
  upstream_timeout: { type: "api_error", status: 504 },
} as const satisfies Record<string, { type: string; status: number }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorExtras {
  /** insufficient_credits: dollars */
  current_balance?: number;
  required_amount?: number;
  /** key_limit_exceeded: dollars left of the key's limit this period */
  limit_remaining?: number;
  /** rate limits: seconds until a retry may succeed (sent as Retry-After) */
  retryAfterSeconds?: number;
  /** rate limits: X-RateLimit-* headers to send with the error */
  headers?: Record<string, string>;
}

/** The one error type of the domain. Each transport maps it to the spec's shape in one place. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly extras: ErrorExtras;

  constructor(code: ErrorCode, message: string, extras: ErrorExtras = {}) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.extras = extras;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get type(): string {
    return ERROR_CODES[this.code].type;
  }
}

export const isAppError = (err: unknown): err is AppError => err instanceof AppError;

/** SPEC 7.1 nested form. */
export interface NestedErrorBody {
  error: { message: string; type: string; code: string; current_balance?: number; required_amount?: number; limit_remaining?: number };
  debug?: { timestamp: string; ip: string; user_agent: string };
}

export function nestedErrorBody(err: AppError): NestedErrorBody {
  const body: NestedErrorBody = { error: { message: err.message, type: err.type, code: err.code } };
  if (err.extras.current_balance !== undefined) body.error.current_balance = err.extras.current_balance;
  if (err.extras.required_amount !== undefined) body.error.required_amount = err.extras.required_amount;
  if (err.extras.limit_remaining !== undefined) body.error.limit_remaining = err.extras.limit_remaining;
  return body;
}

/** SPEC 7.1 status form. */
export interface StatusErrorBody {
  status: "error" | "degraded";
  message: string;
  error_code: string;
  services?: Record<string, unknown>;
}

/** Turns anything thrown into an AppError; unknown errors become internal_error with no internals. */
export function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  return new AppError("internal_error", "An internal error occurred. Please try again later.");
}

export const missingParameter = (name: string) =>
  new AppError("missing_required_parameter", `Missing required parameter: '${name}'.`);

export const invalidParameter = (name: string, rule: string) =>
  new AppError("invalid_parameter", `Invalid parameter '${name}': ${rule}.`);
