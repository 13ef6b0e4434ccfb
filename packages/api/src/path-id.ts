import { z } from "zod";
import { invalidParameter } from "@gw/shared";

// Ids in REST paths (/api/keys/{id}, /api/admin/users/{id}): the REST adapter hands them over still percent-encoded.

/** Characters as JSON Schema's `maxLength` counts them (code points), of the id the segment spells. */
function decodedLength(raw: string): number {
  try {
    return [...decodeURIComponent(raw)].length;
  } catch {
    return [...raw].length;
  }
}

/**
 * A path id's input: at most `max` characters once decoded, as the document states it (`%C3%A9` is one character, not
 * six); a tRPC caller's id, never encoded, counts the same.
 */
export const pathIdField = (description: string, max = 100) => z.string().min(1)
  .refine((raw) => decodedLength(raw) <= max, { message: `must have at most ${max} characters` })
  .meta({ description, maxLength: max });

/**
 * The id a path segment spells: `key%5Fabc` is the same URL as `key_abc` (RFC 3986 6.2.2.2). Ids are `key_`/`usr_`
 * and base62, so decoding never changes an id the dashboard sends over tRPC.
 */
export function decodedPathId(id: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(id);
  } catch {
    throw invalidParameter("id", "malformed percent-encoding");
  }
  // CONTRACT 7b: a NUL (%00) is refused as in any body field, not looked up
  if (decoded.includes("\u0000")) throw invalidParameter("id", "must not contain NUL characters");
  return decoded;
}
