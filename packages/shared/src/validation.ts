// zod issues → CONTRACT 1's 400s: missing_required_parameter or invalid_parameter, naming the parameter and the
// rule it broke in words a client can act on. One wording for every surface (gateway routes, tRPC/REST procedures).
import type { z } from "zod";
import { AppError, invalidParameter, missingParameter } from "./errors";

type Issue = z.core.$ZodIssue;
type BoundIssue = Extract<Issue, { code: "too_big" | "too_small" }>;
type UnionIssue = Extract<Issue, { code: "invalid_union" }>;

/**
 * Something visible: not a separator, control or format character (zero-width space, joiners, bidi marks, BOM), nor a
 * Hangul or Braille filler that renders as nothing, nor another default-ignorable code point (combining grapheme
 * joiner, Khmer inherent vowels, Mongolian and Unicode variation selectors). Text made only of those is blank to the
 * eye: an empty name, prompt or speech text.
 */
export const VISIBLE_CHARACTER = /[^\p{Z}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2800]/u;

/** Dotted parameter name from an issue path: messages[0].content; the whole body when the path is empty. */
export function paramName(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "body";
}

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

function boundRule(issue: BoundIssue): string {
  if (issue.code === "too_small" && issue.origin === "string" && !issue.exact && issue.inclusive !== false && Number(issue.minimum) === 1) {
    return "must not be empty";
  }
  return `${UNIT_OF.has(issue.origin) ? "must have" : "must be"} ${boundOf(issue)}`;
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
      return unionForms(issue, input);
    default:
      return input === undefined ? [] : [kind(typeOfValue(input))];
  }
}

/** Every form the union accepts, or none when a branch cannot be described. */
function unionForms(issue: UnionIssue, input: unknown): string[] {
  const perBranch = issue.errors.map((branch) => formsOf(branch, input));
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

/**
 * The value's type is accepted by exactly one branch, whose own format rule it broke (a query-string count such as
 * `limit=abc` against a number or a digits-only string): that rule ("must be a whole number") is the one to name, not
 * the list of forms, which would include the value's own type.
 */
function formatIssueOf(issue: UnionIssue): Issue | undefined {
  const typed = issue.errors.filter((branch) => !branch.some((i) => i.path.length === 0 && i.code === "invalid_type"));
  const own = typed.length === 1 ? typed[0]?.find((i) => i.path.length === 0) : undefined;
  return own?.code === "invalid_format" ? own : undefined;
}

/** The rule an issue broke, without the parameter's name: "must be at most 2", "must be a string or an array". */
function ruleOf(issue: Issue, input: unknown): string {
  switch (issue.code) {
    case "too_big":
    case "too_small":
      return boundRule(issue);
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_type":
      return `must be ${kind(issue.expected)}`;
    case "invalid_union": {
      const forms = unionForms(issue, input);
      return forms.length > 0 ? `must be ${orList(forms)}` : "must match exactly one of the accepted forms";
    }
    case "invalid_format":
      // a .regex() rule carries its own words; zod's default for it would name the pattern, not the rule
      if (issue.format === "regex") return issue.message.startsWith("Invalid") ? "has an invalid format" : issue.message.replace(/\.$/, "");
      return `must be a valid ${issue.format}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "unrecognized_keys":
      return "is not a known parameter";
    default: {
      // Custom messages ("must not contain NUL bytes") keep their capitals; only zod's own opening is lowered.
      const message = issue.message.replace(/^Invalid input: /, "").replace(/\.$/, "");
      return message.charAt(0).toLowerCase() + message.slice(1);
    }
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const segment of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

/**
 * Issue codes that, on an absent field, mean "required but missing": each schema kind reports it its own way, and a
 * refinement that requires a field (only in some cases) reports a custom issue on it.
 */
const MISSABLE = new Set<Issue["code"]>(["invalid_type", "invalid_value", "invalid_union", "custom"]);

const isMissing = (issue: Issue, input: unknown, prefix: readonly PropertyKey[]): boolean =>
  MISSABLE.has(issue.code) && valueAt(input, [...prefix, ...issue.path]) === undefined;

function errorOf(issue: Issue, input: unknown, prefix: readonly PropertyKey[]): AppError {
  const path = [...prefix, ...issue.path];
  if (isMissing(issue, input, prefix)) return missingParameter(paramName(path));
  const deeper = issue.code === "invalid_union" ? (deeperIssueOf(issue) ?? formatIssueOf(issue)) : undefined;
  if (deeper) return errorOf(deeper, input, path);
  // an unknown key is named itself, not the object holding it
  const named = issue.code === "unrecognized_keys" ? [...path, issue.keys[0] ?? ""] : path;
  return invalidParameter(paramName(named), ruleOf(issue, valueAt(input, path)));
}

/**
 * A failed parse of `input` → the spec's 400. A required field that is absent is reported first, as
 * missing_required_parameter; otherwise the first issue, as invalid_parameter. Never a dump of the issues.
 */
/**
 * The first issue, except that of several bounds broken at its path the tightest is named: an integer above 2^53
 * breaks both zod's safe-integer bound and the field's own `max`, and only the field's is worth saying.
 */
function tightestBound(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue | undefined {
  const first = issues[0];
  if (first?.code !== "too_big" && first?.code !== "too_small") return first;
  const key = first.path.join(".");
  let best = first;
  for (const i of issues) {
    if (i.code !== first.code || i.path.join(".") !== key) continue;
    const tighter = i.code === "too_big" ? Number(i.maximum) < Number((best as typeof i).maximum) : Number(i.minimum) > Number((best as typeof i).minimum);
    if (tighter) best = i;
  }
  return best;
}

export function validationError(error: z.core.$ZodError, input: unknown): AppError {
  const missing = error.issues.find((i) => i.path.length > 0 && isMissing(i, input, []));
  if (missing) return missingParameter(paramName(missing.path));
  const first = tightestBound(error.issues);
  if (!first) return invalidParameter("body", "invalid request body");
  if (first.path.length === 0 && (input === undefined || input === null)) {
    return new AppError("missing_required_parameter", "Missing request body: send a JSON object.");
  }
  return errorOf(first, input, []);
}
