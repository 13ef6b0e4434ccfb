import { randomFillSync } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Several ids are made per gateway request; one 4 KB CSPRNG fill serves hundreds of them instead of a
// randomBytes() call (and a fresh buffer) per id. Every byte is used once.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++] as number;
}

/** Uniform random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** Prefixed ids: usr_..., key_..., req_... (prefix names the resource type). */
export const newId = (prefix: string, length = 24): string => `${prefix}_${randomBase62(length)}`;
