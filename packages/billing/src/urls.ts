import { invalidParameter, missingParameter } from "@gw/shared";

/**
 * success_url / cancel_url: present, absolute, http or https, and on one of `allowedOrigins` (PUBLIC_URL's and
 * CHECKOUT_ALLOWED_ORIGINS), so that the gateway's checkout cannot be used to send a customer to another site.
 */
export function redirectUrl(value: unknown, name: string, allowedOrigins: readonly string[]): string {
  if (value === undefined || value === null || value === "") throw missingParameter(name);
  if (typeof value !== "string") throw invalidParameter(name, "must be an http(s) URL");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidParameter(name, "must be an absolute http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalidParameter(name, "must use http or https");
  if (!allowedOrigins.includes(url.origin)) throw invalidParameter(name, `must be on ${allowedOrigins.join(" or ")}`);
  return value;
}
