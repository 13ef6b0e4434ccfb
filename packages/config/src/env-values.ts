// The rules of single environment values: zod types for the common kinds (numbers, timers, URLs) and the parsers of
// the list-valued variables, each failing with a message that names its variable.
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { isIP, isIPv4 } from "node:net";
import path from "node:path";
import { z } from "zod";
import { ConfigError } from "./config-error";

export const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

/**
 * An http(s) URL. `new URL()` also takes "localhost:8080" (scheme "localhost:") and ftp:// or mailto: addresses,
 * which started the server and failed every call that used them ("unreadable answer" from an upstream, broken links).
 */
export const httpUrl = (name: string, example: string) =>
  z.url({ protocol: /^https?$/, error: `${name} must be an http:// or https:// URL, e.g. ${example}` });
export const upstreamUrl = (name: string) => httpUrl(name, "https://api.example.com").optional();

/**
 * A number written in decimal (an exponent allowed). z.coerce.number() alone reads an empty value as 0 (`Number("")`):
 * `PORT=` in an env file started the server on a random port (its mailed links on http://localhost:0),
 * `UPSTREAM_MAX_RETRIES=` turned retries off. JavaScript's `Number` also reads hexadecimal, octal and binary:
 * PORT=0x50 listened on port 80, a surprise rather than a setting.
 */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

export const envNumber = (rules: (n: z.ZodNumber) => z.ZodNumber = (n) => n) =>
  z.string().trim().min(1, "must be a number, not empty").regex(DECIMAL, "must be a decimal number").transform(Number).pipe(rules(z.number()));

/**
 * Milliseconds that end up in a timer: Node runs a setTimeout longer than 2^31-1 ms after 1 ms instead, so
 * UPSTREAM_TIMEOUT_MS=3000000000 started and timed every upstream call out at once (504 for every request).
 * `headroom` leaves room for what is added to the setting before it is timed (a slot's TTL is the timeout + 60 s).
 */
const MAX_TIMER_MS = 2_147_483_647;
export const timerMs = (headroom = 0) => envNumber((n) => n.int().positive()
  .max(MAX_TIMER_MS - headroom, `must be at most ${MAX_TIMER_MS - headroom} ms (about 24 days, Node's longest timer)`));

/**
 * A limit's window (seconds) is a timer in the in-memory limiter (rate-limiter-flexible, also Redis's fallback): a
 * window past Node's longest timer (LIMIT_LOGIN_IP=10/3000000) forgot every count after 1 ms, so nothing was limited.
 */
export const MAX_WINDOW_SECONDS = Math.floor(MAX_TIMER_MS / 1000);
export const windowTooLong = `must be at most ${MAX_WINDOW_SECONDS} seconds (about 24 days, Node's longest timer)`;

/**
 * OTEL_EXPORTER_OTLP_HEADERS as the OpenTelemetry specification writes it: `key=value` pairs separated by commas,
 * values percent-encoded (`Authorization=Bearer%20abc`).
 */
export function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const value = pair.slice(at + 1).trim();
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(value);
    } catch {
      headers[pair.slice(0, at).trim()] = value;
    }
  }
  return headers;
}

/** The names Express's `trust proxy` (proxy-addr) accepts in place of addresses. */
const PROXY_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** One entry of a `trust proxy` list: a name, an address, or a subnet (`ip/bits` or IPv4 `ip/netmask`). */
function isProxyEntry(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address = "", range, ...rest] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d+$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && isIPv4(range);
}

export function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === "" || raw === "false") return false;
  if (raw === "true") return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  // Checked here so that a bad list stops the start naming the variable, rather than Express's bare
  // "invalid IP address" when the app is built.
  if (!raw.split(",").every((entry) => isProxyEntry(entry.trim()))) {
    throw new ConfigError(`TRUST_PROXY must be true, false, a hop count or a comma-separated list of proxy addresses, subnets (ip/bits) or loopback, linklocal, uniquelocal; got "${raw}"`);
  }
  return raw;
}

/**
 * API_CORS_ORIGINS: `*`, empty (CORS off) or a comma-separated list of origins. An entry is kept as its origin
 * (`https://App.example.com:443` is `https://app.example.com`), as browsers send it; one with a path, query or
 * credentials stops the start rather than never matching.
 */
export function parseCorsOrigins(raw: string): "*" | string[] {
  const trimmed = raw.trim();
  if (trimmed === "*") return "*";
  if (trimmed === "") return [];
  return parseOrigins("API_CORS_ORIGINS", trimmed, "*, empty (CORS off) or ");
}

/** A comma-separated list of origins (scheme, host, optional port), each as `URL.origin` spells it. */
export function parseOrigins(name: string, raw: string, alternatives = ""): string[] {
  if (raw.trim() === "") return [];
  return raw.split(",").map((entry) => {
    const url = URL.parse(entry.trim());
    if (!url || !/^https?:$/.test(url.protocol) || url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
      throw new ConfigError(`${name} must be ${alternatives}a comma-separated list of origins such as https://app.example.com (scheme, host, optional port); got "${entry.trim()}"`);
    }
    return url.origin;
  });
}

/** ADMIN_EMAILS: comma-separated, trimmed and lower-cased (accounts are matched by their normalized e-mail). */
export function parseAdminEmails(raw: string): string[] {
  return raw.split(",").map((email) => email.trim().normalize("NFC").toLowerCase()).filter((email) => email.length > 0);
}

/**
 * DATA_DIR is created when first written to (session secret, database, outbox): the nearest path that exists at or
 * above it must be a directory this user may write in. Checked here, without creating anything, so that a file in the
 * way is named as DATA_DIR rather than as a bare mkdir error from wherever it is first written.
 */
export function checkDataDir(dataDir: string): void {
  let existing = dataDir;
  while (!existsSync(existing)) existing = path.dirname(existing);
  if (!statSync(existing).isDirectory()) {
    throw new ConfigError(`DATA_DIR ${dataDir} cannot be used as a directory: ${existing} is a file`);
  }
  // a directory the server may not write to (or create DATA_DIR in) failed later as a bare EACCES naming no setting
  try {
    accessSync(existing, constants.W_OK | constants.X_OK);
  } catch {
    throw new ConfigError(`DATA_DIR ${dataDir} is not writable: ${existing} does not allow this user to write in it`);
  }
}
