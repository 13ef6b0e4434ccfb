import { VISIBLE_CHARACTER } from "@gw/shared";
import { z } from "zod";

/** A human-readable name (accounts, API keys): trimmed, 1..max characters, something visible, no control characters
 * and no line or paragraph separators. */
export const displayName = (max: number) =>
  z.string().trim().min(1).max(max)
    .regex(VISIBLE_CHARACTER, "must not be empty")
    // U+2028 / U+2029 break lines as \n does: refused like the control characters
    .regex(/^[^\p{Cc}\u2028\u2029]*$/u, "must not contain control characters");
