import { AppError, invalidParameter, missingParameter } from "@gw/shared";
import type { z } from "zod";

/** Dotted parameter name from a zod issue path: messages[0].content */
function paramName(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "body";
}

/** " characters" / " item" etc. after a length bound; nothing after a numeric one. */
function unit(origin: string, bound: number | bigint): string {
  const word = origin === "string" ? "character" : origin === "array" ? "item" : "";
  return word ? ` ${word}${Number(bound) === 1 ? "" : "s"}` : "";
}

function ruleOf(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "too_big":
      return `must be at most ${String(issue.maximum)}${unit(issue.origin, issue.maximum)}`;
    case "too_small":
      return `must be at least ${String(issue.minimum)}${unit(issue.origin, issue.minimum)}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_type":
      if (issue.expected === "int") return "must be an integer";
      return `must be ${issue.expected === "array" || issue.expected === "object" ? "an" : "a"} ${issue.expected}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "unrecognized_keys":
      return `unknown field(s) ${issue.keys.join(", ")}`;
    default:
      return issue.message.replace(/^Invalid input: /, "").toLowerCase();
  }
}

const MISSABLE = new Set<z.core.$ZodIssue["code"]>(["invalid_type", "invalid_value", "invalid_union"]);

/** Maps the first zod issue to CONTRACT 1: missing_required_parameter or invalid_parameter, naming the parameter. */
export function toValidationError(error: z.ZodError): AppError {
  const issue = error.issues[0];
  if (!issue) return invalidParameter("body", "invalid request body");
  const name = paramName(issue.path);
  // an absent field is reported as invalid_type, invalid_value (enums, literals) or invalid_union, by its schema's kind
  const absent = !("input" in issue && issue.input !== undefined);
  if (absent && MISSABLE.has(issue.code)) return missingParameter(name);
  return invalidParameter(name, ruleOf(issue));
}

/** Parses with the schema or throws the spec's 400. */
export function parseOrThrow<S extends z.ZodType>(schema: S, data: unknown): z.output<S> {
  const result = schema.safeParse(data, { reportInput: true });
  if (!result.success) throw toValidationError(result.error);
  return result.data;
}

export function requireObject(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new AppError("invalid_parameter", "Invalid parameter 'body': the request body must be a JSON object.");
  }
  return body as Record<string, unknown>;
}
