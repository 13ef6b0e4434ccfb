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

type Issue = z.core.$ZodIssue;
type BoundIssue = Extract<Issue, { code: "too_big" | "too_small" }>;
type UnionIssue = Extract<Issue, { code: "invalid_union" }>;

/** Origins whose bound counts units (characters, items, bytes) rather than being a value. */
const UNIT_OF = new Map<string, string>([["string", "character"], ["array", "item"], ["set", "item"], ["file", "byte"]]);

/** "a string", "an array", "an integer", "null": the noun for a zod type name. */
function kind(type: string): string {
  if (type === "int") return "an integer";
  if (type === "null" || type === "undefined") return type;
  return `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

/** "at most 4", "greater than 0", "exactly 1 item", "at least 2 characters": the bound an issue names. */
function boundOf(issue: BoundIssue): string {
  const max = issue.code === "too_big";
  const limit = max ? issue.maximum : issue.minimum;
  const word = UNIT_OF.get(issue.origin);
  const value = issue.origin === "date" ? new Date(Number(limit)).toISOString() : String(limit);
  const shown = word ? `${value} ${word}${Number(limit) === 1 ? "" : "s"}` : value;
  if (issue.exact) return `exactly ${shown}`;
  // zod v4 sets `inclusive` on every bound; gt/lt/positive/negative are exclusive
  const inclusive = issue.inclusive !== false;
  if (issue.origin === "date") return `${inclusive ? "on or " : ""}${max ? "before" : "after"} ${shown}`;
  return `${max ? (inclusive ? "at most" : "less than") : (inclusive ? "at least" : "greater than")} ${shown}`;
}

const orList = (items: string[]): string =>
  items.length > 1 ? `${items.slice(0, -1).join(", ")} or ${items.at(-1) ?? ""}` : (items[0] ?? "");

function typeOfValue(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/**
 * What one union branch accepts, read from the issue it raised on the value itself: "a string",
 * "an array of exactly 1 item". A branch that failed only deeper inside accepted the value's type.
 */
function formsOf(branch: readonly Issue[], input: unknown): string[] {
  const issue = branch.find((i) => i.path.length === 0);
  switch (issue?.code) {
    case "invalid_type":
      return [kind(issue.expected)];
    case "invalid_value":
      return issue.values.map((v) => JSON.stringify(v));
    case "too_big":
    case "too_small":
      return [`${kind(issue.origin)}${UNIT_OF.has(issue.origin) ? " of" : ""} ${boundOf(issue)}`];
    case "invalid_union":
      return unionForms(issue);
    default:
      return input === undefined ? [] : [kind(typeOfValue(input))];
  }
}

/** Every form the union accepts, or none when a branch cannot be described. */
function unionForms(issue: UnionIssue): string[] {
  const perBranch = issue.errors.map((branch) => formsOf(branch, issue.input));
  return perBranch.some((forms) => forms.length === 0) ? [] : [...new Set(perBranch.flat())];
}

/**
 * The value's type matched exactly one branch, which failed deeper inside (messages[0].content[0].type):
 * that branch's first issue says more than the list of accepted forms.
 */
function deeperIssueOf(issue: UnionIssue): Issue | undefined {
  const deeper = issue.errors.filter((branch) => branch.length > 0 && branch.every((i) => i.path.length > 0));
  return deeper.length === 1 ? deeper[0]?.[0] : undefined;
}

function ruleOf(issue: Issue): string {
  switch (issue.code) {
    case "too_big":
    case "too_small":
      return `${issue.exact ? "must have" : "must be"} ${boundOf(issue)}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_type":
      return `must be ${kind(issue.expected)}`;
    case "invalid_union": {
      const forms = unionForms(issue);
      return forms.length > 0 ? `must be ${orList(forms)}` : "must match exactly one of the accepted forms";
    }
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "unrecognized_keys":
      return `unknown field(s) ${issue.keys.join(", ")}`;
    default: {
      // Custom messages ("must not contain NUL bytes") keep their capitals; only zod's own opening is lowered.
      const message = issue.message.replace(/^Invalid input: /, "");
      return message.charAt(0).toLowerCase() + message.slice(1);
    }
  }
}

const MISSABLE = new Set<Issue["code"]>(["invalid_type", "invalid_value", "invalid_union"]);

function errorOf(issue: Issue, prefix: readonly PropertyKey[]): AppError {
  const path = [...prefix, ...issue.path];
  const name = paramName(path);
  // an absent field is reported as invalid_type, invalid_value (enums, literals) or invalid_union, by its schema's kind
  const absent = !("input" in issue && issue.input !== undefined);
  if (absent && MISSABLE.has(issue.code)) return missingParameter(name);
  const deeper = issue.code === "invalid_union" ? deeperIssueOf(issue) : undefined;
  if (deeper) return errorOf(deeper, path);
  return invalidParameter(name, ruleOf(issue));
}

/** Maps the first zod issue to CONTRACT 1: missing_required_parameter or invalid_parameter, naming the parameter and the rule. */
export function toValidationError(error: z.ZodError): AppError {
  const issue = error.issues[0];
  if (!issue) return invalidParameter("body", "invalid request body");
  return errorOf(issue, []);
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
