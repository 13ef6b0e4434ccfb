import { z } from "zod";

// Blank to the eye: separators, format characters (zero-width space, joiners, bidi marks) and the Hangul and
// Braille fillers that render as nothing. A name made only of these would list as an empty name.
const VISIBLE = /[^\p{Z}\p{Cc}\p{Cf}\u115F\u1160\u3164\uFFA0\u2800]/u;

/** A human-readable name (accounts, API keys): trimmed, 1..max characters, something visible, no control characters. */
export const displayName = (max: number) =>
  z.string().trim().min(1).max(max)
    .regex(VISIBLE, "must not be empty")
    .regex(/^[^\p{Cc}]*$/u, "must not contain control characters");
