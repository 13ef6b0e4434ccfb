import { invalidParameter, missingParameter } from "@gw/shared";

/** success_url / cancel_url: present, absolute, http or https. */
export function redirectUrl(value: unknown, name: string): string {
  if (value === undefined || value === null || value === "") throw missingParameter(name);
  if (typeof value !== "string") throw invalidParameter(name, "must be an http(s) URL");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidParameter(name, "must be an absolute http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalidParameter(name, "must use http or https");
  return value;
}
