import type { ApiKey, KeyControlsInput } from "./api";

// The key-controls form of CONTRACT 10 as text fields, and its translation to and from the API's fields.

export type LimitReset = ApiKey["limit_reset"];

/** Every period the API knows, in words (a Record, so a period added to the API is a type error here until named). */
export const RESET_LABELS: Record<LimitReset, string> = { never: "in all (never resets)", daily: "per day", weekly: "per week", monthly: "per month" };
export const LIMIT_RESETS = Object.keys(RESET_LABELS) as LimitReset[];

export interface ControlsForm {
  limit: string;
  limitReset: LimitReset;
  /** empty: every model */
  allowedModels: string[];
  requestsPerMinute: string;
  concurrentRequests: string;
  /** a datetime-local value (the browser's time zone); empty: never */
  expiresAt: string;
  /** IPs or CIDRs, one a line or separated by commas; empty: any address */
  allowedIps: string;
}

export const EMPTY_CONTROLS: ControlsForm = {
  limit: "", limitReset: "never", allowedModels: [], requestsPerMinute: "", concurrentRequests: "", expiresAt: "", allowedIps: "",
};

type KeyWithControls = Pick<ApiKey, "limit" | "limit_reset" | "allowed_models" | "rate_limit" | "expires_at" | "allowed_ips">;

const pad = (n: number) => String(n).padStart(2, "0");

/** An ISO instant as a datetime-local value in the browser's time zone. */
function toLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function formFromKey(key: KeyWithControls): ControlsForm {
  return {
    limit: key.limit === null ? "" : key.limit.toFixed(2),
    limitReset: key.limit_reset,
    allowedModels: key.allowed_models ?? [],
    requestsPerMinute: key.rate_limit ? String(key.rate_limit.requests_per_minute) : "",
    concurrentRequests: key.rate_limit ? String(key.rate_limit.concurrent_requests) : "",
    expiresAt: key.expires_at ? toLocalInput(key.expires_at) : "",
    allowedIps: (key.allowed_ips ?? []).join("\n"),
  };
}

const WHOLE = /^\d{1,9}$/;

/**
 * The API's fields for the form (an empty field is null: no limit, every model, any address, never expires), or the
 * first problem in words. The server checks again (models, plan limits, CIDRs) and names what it refuses.
 */
export function controlsFromForm(form: ControlsForm, nowMs: number): { input: KeyControlsInput } | { error: string } {
  const limitText = form.limit.trim().replace(/^\$/, "");
  if (limitText && !/^\d+(\.\d{1,2})?$/.test(limitText)) return { error: "Enter the spend limit in dollars, with at most two decimals." };
  const limit = limitText ? Number(limitText) : null;
  if (limit !== null && limit <= 0) return { error: "The spend limit must be above $0 (leave it empty for no limit)." };
  if (limit === null && form.limitReset !== "never") return { error: "A limit that resets needs an amount." };

  const rpm = form.requestsPerMinute.trim();
  const concurrent = form.concurrentRequests.trim();
  if ((rpm === "") !== (concurrent === "")) return { error: "Give both rate limits (requests per minute and concurrent requests), or neither." };
  if (rpm && (!WHOLE.test(rpm) || !WHOLE.test(concurrent) || Number(rpm) < 1 || Number(concurrent) < 1)) {
    return { error: "Rate limits are whole numbers of at least 1." };
  }

  let expiresAt: string | null = null;
  if (form.expiresAt) {
    const ms = new Date(form.expiresAt).getTime();
    if (Number.isNaN(ms)) return { error: "Enter the expiry as a date and time." };
    if (ms <= nowMs) return { error: "The expiry must be in the future." };
    expiresAt = new Date(ms).toISOString();
  }

  const ips = form.allowedIps.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);
  return {
    input: {
      limit,
      limit_reset: form.limitReset,
      allowed_models: form.allowedModels.length > 0 ? form.allowedModels : null,
      rate_limit: rpm ? { requests_per_minute: Number(rpm), concurrent_requests: Number(concurrent) } : null,
      expires_at: expiresAt,
      allowed_ips: ips.length > 0 ? [...new Set(ips)] : null,
    },
  };
}

/** The key's restrictions in a few words, for the list: "2 models", "rate 10/min, 2 at once", "IPs 203.0.113.7". */
export function controlsSummary(key: KeyWithControls, formatDay: (iso: string) => string): string[] {
  const parts: string[] = [];
  if (key.allowed_models) parts.push(key.allowed_models.length === 1 ? `model ${key.allowed_models[0] ?? ""}` : `${key.allowed_models.length} models`);
  if (key.rate_limit) parts.push(`${key.rate_limit.requests_per_minute}/min, ${key.rate_limit.concurrent_requests} at once`);
  if (key.allowed_ips) parts.push(key.allowed_ips.length === 1 ? `IP ${key.allowed_ips[0] ?? ""}` : `${key.allowed_ips.length} IP ranges`);
  if (key.expires_at) parts.push(`expires ${formatDay(key.expires_at)}`);
  return parts;
}
