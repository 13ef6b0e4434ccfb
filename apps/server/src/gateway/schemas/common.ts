import type { ChatMessage } from "@gw/providers";
import { VISIBLE_CHARACTER, characterCount } from "@gw/shared";
import { z } from "zod";

/** Strings never carry NUL bytes (CONTRACT 7b). */
const withoutNul = (schema: z.ZodString) => schema.refine((s) => !s.includes("\u0000"), { message: "must not contain NUL bytes" });

export const safeString = (max: number) => withoutNul(z.string().max(max));

export const MAX_MESSAGES = 500;
export const MAX_MESSAGE_CHARS = 400_000;
export const MAX_PROMPT_CHARS = 4_000;

/**
 * An optional field with a default: null reads as absent (OpenAI's convention, and what the routes' other optional
 * fields already do), so `{"steps": null}` gets the default rather than a 400.
 */
export const withDefault = <T extends z.ZodType>(schema: T, fallback: z.output<T>) =>
  schema.nullish().transform((value): z.output<T> => value ?? fallback);

export const temperature = z.number().min(0).max(2);
export const positiveInt = z.number().int().positive();

/**
 * OpenAI content: a string, or an array of parts. Text parts are read (counted, moderated); every part, text
 * included, is kept as sent and in its order for the upstream (image_url, input_audio, file ...).
 */
const contentPart = z.looseObject({ type: safeString(100), text: safeString(MAX_MESSAGE_CHARS).optional() }).superRefine((part, ctx) => {
  if (part.type === "text" && part.text === undefined) ctx.addIssue({ code: "custom", input: undefined, path: ["text"], message: "must be a string" });
});
const contentSchema = z.union([safeString(MAX_MESSAGE_CHARS), z.array(contentPart).min(1).max(100)]);

const toolCall = z.object({
  id: safeString(200),
  type: z.literal("function"),
  function: z.object({ name: safeString(200), arguments: safeString(MAX_MESSAGE_CHARS) }),
});

/** `developer` is the newer name of `system` in OpenAI clients; the legacy `function` role answers a call like `tool`. */
const ROLES = { system: "system", developer: "system", user: "user", assistant: "assistant", tool: "tool", function: "tool" } as const;

/**
 * One chat message. Content may be absent or null only on an assistant message (one that made tool calls, say);
 * a `tool` message names the call it answers.
 */
export const message = z.object({
  role: z.enum(["system", "user", "assistant", "developer", "tool", "function"]),
  content: contentSchema.nullish(),
  name: safeString(200).optional(),
  tool_calls: z.array(toolCall).max(128).optional(),
  tool_call_id: safeString(200).optional(),
}).superRefine((m, ctx) => {
  // reported like a schema's own issues: an absent field as missing, a null one as the wrong type
  if (m.content == null && m.role !== "assistant") {
    ctx.addIssue({ code: "custom", input: m.content, path: ["content"], message: "must be a string or an array" });
  }
  if (m.role === "tool" && m.tool_call_id === undefined) {
    ctx.addIssue({ code: "custom", input: undefined, path: ["tool_call_id"], message: "must be a string" });
  }
}).transform((m): ChatMessage => {
  const out: ChatMessage = { role: ROLES[m.role], content: "" };
  if (typeof m.content === "string") out.content = m.content;
  else if (m.content) {
    // the parts keep their order: "Image 1:" <image> "Image 2:" <image> must not become both labels, then both images
    out.parts = m.content;
    for (const part of m.content) if (part.type === "text") out.content += part.text ?? "";
  }
  if (m.tool_calls) out.toolCalls = m.tool_calls;
  if (m.tool_call_id !== undefined) out.toolCallId = m.tool_call_id;
  if (m.name !== undefined) out.name = m.name;
  return out;
});

export const messages = z.array(message).min(1).max(MAX_MESSAGES);

/**
 * At most `max` characters counted as speech text is billed (characterCount: an emoji is one character, not the two
 * UTF-16 units `z.string().max` counts). Only a string longer than `max` units needs counting.
 */
const maxCharacters = (max: number) => z.string().superRefine((s, ctx) => {
  if (s.length > max && (s.length > 2 * max || characterCount(s) > max)) ctx.addIssue({ code: "too_big", origin: "string", maximum: max, inclusive: true, input: s });
});

/** Text billed per request (an image prompt, speech text) must show something: blank to the eye is empty. */
export const visibleText = (max: number) =>
  withoutNul(maxCharacters(max)).refine((s) => VISIBLE_CHARACTER.test(s), { message: "must not be empty" })
    // what the refinements check, stated for the OpenAPI document (apps/server/src/gateway/openapi.ts)
    .meta({ minLength: 1, maxLength: max });

export const imagePrompt = visibleText(MAX_PROMPT_CHARS);
