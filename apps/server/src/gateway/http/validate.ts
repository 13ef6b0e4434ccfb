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

function ruleOf(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "too_big":
      return `must be at most ${String(issue.maximum)}${issue.origin === "string" ? " characters" : issue.origin === "array" ? " items" : ""}`;
    case "too_small":
      return `must be at least ${String(issue.minimum)}${issue.origin === "string" ? " characters" : issue.origin === "array" ? " items" : ""}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_type":
      return `must be ${issue.expected === "int" ? "an integer" : `a ${issue.expected}`}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "unrecognized_keys":
      return `unknown field(s) ${issue.keys.join(", ")}`;
    default:
      return issue.message.replace(/^Invalid input: /, "").toLowerCase();
  }
}

/** Maps the first zod issue to CONTRACT 1: missing_required_parameter or invalid_parameter, naming the parameter. */
export function toValidationError(error: z.ZodError): AppError {
  const issue = error.issues[0];
  if (!issue) return invalidParameter("body", "invalid request body");
  const name = paramName(issue.path);
  if (issue.code === "invalid_type" && !("input" in issue && issue.input !== undefined)) return missingParameter(name);
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
