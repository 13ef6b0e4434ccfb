import { hash } from "node:crypto";
import { randomBase62 } from "@gw/shared";

/** CONTRACT 3: `ak-<KEY_ENV>-<id>` where id is at least 32 random base62 characters. */
export const KEY_SECRET_LENGTH = 40;
/** CONTRACT 3: the visible prefix is the first 12 characters of the key. */
export const KEY_PREFIX_LENGTH = 12;

// Accepts any environment segment so a key of another deployment is "unknown", not "malformed";
// the upper bound keeps hashing cheap for junk input.
const KEY_PATTERN = /^ak-[a-z0-9]{1,16}-[0-9A-Za-z]{32,64}$/;

export interface GeneratedApiKey {
  /** the full secret: shown once, never stored */
  key: string;
  prefix: string;
  hash: string;
}

/**
 * SHA-256 of the full key, hex. Keys carry >= 190 bits of entropy, so a fast hash is enough.
 * One-shot `crypto.hash`, not `createHash`: this runs on every request, and each `Hash` object is a native wrapper
 * with a weak handle that the next young-generation collection has to process (docs/performance.md).
 */
export function hashApiKey(key: string): string {
  return hash("sha256", key, "hex");
}

export function isWellFormedApiKey(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

export function generateApiKey(keyEnv: string): GeneratedApiKey {
  const key = `ak-${keyEnv}-${randomBase62(KEY_SECRET_LENGTH)}`;
  return { key, prefix: key.slice(0, KEY_PREFIX_LENGTH), hash: hashApiKey(key) };
}
