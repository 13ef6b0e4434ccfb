import { VISIBLE_CHARACTER } from "@gw/shared";
import { z } from "zod";

/** A human-readable name (accounts, API keys): trimmed, 1..max characters, something visible, no control characters. */
export const displayName = (max: number) =>
  z.string().trim().min(1).max(max)
    .regex(VISIBLE_CHARACTER, "must not be empty")
    .regex(/^[^\p{Cc}]*$/u, "must not contain control characters");
