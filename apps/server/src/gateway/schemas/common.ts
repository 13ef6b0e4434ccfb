import { z } from "zod";

/** Strings never carry NUL bytes (CONTRACT 7b). */
export const safeString = (max: number) =>
  z.string().max(max).refine((s) => !s.includes("\u0000"), { message: "must not contain NUL bytes" });

export const MAX_MESSAGES = 500;
export const MAX_MESSAGE_CHARS = 400_000;
export const MAX_PROMPT_CHARS = 4_000;

export const temperature = z.number().min(0).max(2);
export const positiveInt = z.number().int().positive();

/** OpenAI content may be a string or an array of text parts; other part types are not supported here. */
const contentPart = z.object({ type: z.literal("text"), text: safeString(MAX_MESSAGE_CHARS) });
export const messageContent = z.union([safeString(MAX_MESSAGE_CHARS), z.array(contentPart).min(1).max(100)])
  .transform((c) => (typeof c === "string" ? c : c.map((p) => p.text).join("")));

/** `developer` is the newer name of `system` in OpenAI clients. */
export const message = z.object({
  role: z.enum(["system", "user", "assistant", "developer"]).transform((r) => (r === "developer" ? "system" : r)),
  content: messageContent,
});

export const messages = z.array(message).min(1).max(MAX_MESSAGES);

export const imagePrompt = safeString(MAX_PROMPT_CHARS).refine((s) => s.trim().length > 0, { message: "must not be empty" });
