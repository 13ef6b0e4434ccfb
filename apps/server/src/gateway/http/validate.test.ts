import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isAppError } from "@gw/shared";
import { chatBody, completionBody, embeddingBody } from "../schemas/text";
import { parseOrThrow } from "./validate";

/** The error parseOrThrow raises, as the client sees it: code and message. */
function rejection(schema: z.ZodType, data: unknown): { code: string; message: string } {
  try {
    parseOrThrow(schema, data);
  } catch (err) {
    if (isAppError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("expected a validation error");
}

const messageOf = (schema: z.ZodType, value: unknown) => rejection(z.object({ v: schema }), { v: value }).message;

describe("validationError: bounds say whether they include their limit (CONTRACT 1)", () => {
  it.each<[string, z.ZodType, unknown, string]>([
    ["positive", z.number().int().positive(), 0, "must be greater than 0"],
    ["gt", z.number().gt(1.5), 1.5, "must be greater than 1.5"],
    ["min", z.number().min(1), 0, "must be at least 1"],
    ["nonnegative", z.number().nonnegative(), -1, "must be at least 0"],
    ["negative", z.number().negative(), 0, "must be less than 0"],
    ["lt", z.number().lt(10), 10, "must be less than 10"],
    ["max", z.number().max(2), 2.5, "must be at most 2"],
    ["safe integer range", z.number().int(), 2 ** 60, "must be at most 9007199254740991"],
    ["the field's own bound, not the safe integer range", z.number().int().min(0).max(4_294_967_295), 2 ** 60, "must be at most 4294967295"],
    ["the tighter of two lower bounds", z.number().int().min(5), -(2 ** 60), "must be at least 5"],
    ["bigint positive", z.bigint().positive(), 0n, "must be greater than 0"],
    ["string min", z.string().min(2), "a", "must have at least 2 characters"],
    ["string max", z.string().max(1), "ab", "must have at most 1 character"],
    ["string min 1", z.string().min(1), "", "must not be empty"],
    ["string length", z.string().length(3), "ab", "must have exactly 3 characters"],
    ["array min", z.array(z.string()).min(1), [], "must have at least 1 item"],
    ["array max", z.array(z.string()).max(2), ["a", "b", "c"], "must have at most 2 items"],
    ["array length, too many", z.array(z.string()).length(1), ["a", "b"], "must have exactly 1 item"],
    ["array length, too few", z.array(z.string()).length(2), [], "must have exactly 2 items"],
    ["set size", z.set(z.string()).size(2), new Set(["a"]), "must have exactly 2 items"],
    ["set min", z.set(z.string()).min(2), new Set(["a"]), "must have at least 2 items"],
    ["date min", z.date().min(new Date(0)), new Date(-1), "must be on or after 1970-01-01T00:00:00.000Z"],
    ["date max", z.date().max(new Date(0)), new Date(1), "must be on or before 1970-01-01T00:00:00.000Z"],
  ])("%s", (_name, schema, value, rule) => {
    expect(messageOf(schema, value)).toBe(`Invalid parameter 'v': ${rule}.`);
  });

  it("max_tokens: 0 on /v1/chat/completions asks for more than 0, not at least 0", () => {
    expect(rejection(chatBody, { model: "textA-4", messages: [{ role: "user", content: "hi" }], max_tokens: 0 }))
      .toEqual({ code: "invalid_parameter", message: "Invalid parameter 'max_tokens': must be greater than 0." });
  });
});

describe("validationError: unions list the forms their branches accept", () => {
  const chat = (content: unknown) => ({ model: "textA-4", messages: [{ role: "user", content }] });

  it("completions prompt with two strings: a string or an array of exactly 1 item", () => {
    expect(rejection(completionBody, { model: "text-davinci-003", prompt: ["a", "b"] }))
      .toEqual({ code: "invalid_parameter", message: "Invalid parameter 'prompt': must be a string or an array of exactly 1 item." });
  });

  it("chat content as an object: a string or an array", () => {
    expect(rejection(chatBody, chat({ text: "hi" })))
      .toEqual({ code: "invalid_parameter", message: "Invalid parameter 'messages[0].content': must be a string or an array." });
  });

  it("embeddings input as a number: a string or an array", () => {
    expect(rejection(embeddingBody, { model: "text-embedding-ada-002", input: 42 }))
      .toEqual({ code: "invalid_parameter", message: "Invalid parameter 'input': must be a string or an array." });
  });

  it("an array of content parts failing inside names the part's own field and rule", () => {
    expect(rejection(chatBody, chat([{ type: "text", text: 5 }])))
      .toEqual({ code: "invalid_parameter", message: "Invalid parameter 'messages[0].content[0].text': must be a string." });
    expect(rejection(chatBody, chat([{ type: 7 }])))
      .toEqual({ code: "invalid_parameter", message: "Invalid parameter 'messages[0].content[0].type': must be a string." });
    expect(rejection(chatBody, chat([{ type: "text" }])))
      .toEqual({ code: "missing_required_parameter", message: "Missing required parameter: 'messages[0].content[0].text'." });
  });

  it("literal, enum and nested branches", () => {
    expect(messageOf(z.union([z.literal("auto"), z.number().int().positive()]), "manual"))
      .toBe("Invalid parameter 'v': must be \"auto\" or a number.");
    expect(messageOf(z.union([z.string(), z.union([z.number(), z.boolean()]), z.null()]), [1]))
      .toBe("Invalid parameter 'v': must be a string, a number, a boolean or null.");
    expect(messageOf(z.union([z.enum(["low", "high"]), z.array(z.string()).max(1)]), "mid"))
      .toBe("Invalid parameter 'v': must be \"low\", \"high\" or an array.");
  });

  it("keeps missing_required_parameter for absent fields", () => {
    expect(rejection(completionBody, { model: "text-davinci-003" }))
      .toEqual({ code: "missing_required_parameter", message: "Missing required parameter: 'prompt'." });
    expect(rejection(embeddingBody, { model: "text-embedding-ada-002" }))
      .toEqual({ code: "missing_required_parameter", message: "Missing required parameter: 'input'." });
    expect(rejection(chatBody, { model: "textA-4", messages: [{ role: "user" }] }))
      .toEqual({ code: "missing_required_parameter", message: "Missing required parameter: 'messages[0].content'." });
  });
});

describe("validationError: custom rules", () => {
  it("keeps the capitals of a schema's own message", () => {
    expect(rejection(chatBody, { model: "m", messages: [{ role: "user", content: "a\u0000b" }] }).message)
      .toBe("Invalid parameter 'messages[0].content': must not contain NUL bytes.");
  });
});
