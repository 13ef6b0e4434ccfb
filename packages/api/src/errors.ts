import type { TRPCError } from "@trpc/server";
import { AppError, invalidParameter, missingParameter } from "@gw/shared";
import { z } from "zod";

type Issue = z.core.$ZodIssue;

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const segment of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

const plural = (n: number | bigint, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The rule an issue broke, in words a client can act on. */
function ruleOf(issue: Issue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.expected === "int") return "must be an integer";
      return `must be ${issue.expected === "array" || issue.expected === "object" ? "an" : "a"} ${issue.expected}`;
    case "too_small":
      if (issue.origin === "string") return Number(issue.minimum) === 1 ? "must not be empty" : `must be at least ${plural(issue.minimum, "character")}`;
      if (issue.origin === "array") return `must have at least ${plural(issue.minimum, "item")}`;
      return `must be ${issue.inclusive ? "at least" : "greater than"} ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "string") return `must be at most ${plural(issue.maximum, "character")}`;
      if (issue.origin === "array") return `must have at most ${plural(issue.maximum, "item")}`;
      return `must be ${issue.inclusive ? "at most" : "less than"} ${issue.maximum}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_format":
      // a .regex() rule carries its own words; zod's default for it would name the pattern, not the rule
      if (issue.format === "regex") return issue.message.startsWith("Invalid") ? "has an invalid format" : issue.message.replace(/\.$/, "");
      return `must be a valid ${issue.format}`;
    case "unrecognized_keys":
      return "is not a known parameter";
    default:
      return issue.message.replace(/\.$/, "");
  }
}

/**
 * Issue codes that, on an absent field, mean "required but missing": a plain type (invalid_type), an enum or
 * literal (invalid_value) or a union (invalid_union) all report an undefined input their own way.
 */
const MISSABLE = new Set<Issue["code"]>(["invalid_type", "invalid_value", "invalid_union"]);

const nameOf = (path: PropertyKey[]) => (path.length === 0 ? "body" : path.map(String).join("."));

/**
 * Input validation failure → 400 naming the parameter: missing_required_parameter when a required field is absent,
 * invalid_parameter otherwise. Never a dump of the validator's issues.
 */
export function appErrorFromZod(error: z.core.$ZodError, input: unknown): AppError {
  const issues = error.issues;
  const missing = issues.find((i) => MISSABLE.has(i.code) && i.path.length > 0 && valueAt(input, i.path) === undefined);
  if (missing) return missingParameter(nameOf(missing.path));
  const first = issues[0];
  if (!first) return new AppError("invalid_parameter", "Invalid request parameters.");
  if (first.code === "invalid_type" && first.path.length === 0 && (input === undefined || input === null)) {
    return new AppError("missing_required_parameter", "Missing request body: send a JSON object.");
  }
  const path = first.code === "unrecognized_keys" ? [...first.path, first.keys[0] ?? ""] : first.path;
  return invalidParameter(nameOf(path), ruleOf(first));
}

/** Maps whatever a tRPC procedure or adapter threw to the one domain error type. */
export function toApiError(error: TRPCError, input?: unknown): AppError {
  const cause = error.cause;
  if (cause instanceof AppError) return cause;
  if (cause instanceof z.core.$ZodError && error.code === "BAD_REQUEST") return appErrorFromZod(cause, input);
  switch (error.code) {
    case "PARSE_ERROR":
      return new AppError("invalid_json", "The request body is not valid JSON.");
    case "PAYLOAD_TOO_LARGE":
      return new AppError("payload_too_large", "The request body is too large.");
    case "UNSUPPORTED_MEDIA_TYPE":
      return new AppError("unsupported_media_type", "Unsupported Content-Type: send application/json.");
    case "NOT_FOUND":
      return new AppError("not_found", "No such route.");
    case "METHOD_NOT_SUPPORTED":
      return new AppError("method_not_allowed", "Method not allowed for this route.");
    case "BAD_REQUEST":
      return new AppError("invalid_parameter", error.message);
    default:
      return new AppError("internal_error", "An internal error occurred. Please try again later.");
  }
}

