import { invalidParameter, type AppError } from "./errors";

/** The name of the first field of a parsed JSON body whose key or string value `bad` refuses, or undefined. */
function fieldWith(value: unknown, bad: (text: string) => boolean, path = ""): string | undefined {
  if (typeof value === "string") return bad(value) ? path || "body" : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  const entries: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((item, index) => [`[${index}]`, item])
    : Object.entries(value).map(([key, item]) => [path ? `.${key}` : key, item]);
  for (const [segment, item] of entries) {
    const name = `${path}${segment}`;
    if (bad(segment)) return name.replaceAll("\u0000", "\\u0000");
    const found = fieldWith(item, bad, name);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The name of the first field of a parsed JSON body whose key or string value holds a NUL character, or undefined.
 * CONTRACT 7b: NUL bytes get a 4xx; they would otherwise reach e-mails, names and the database unnoticed.
 */
export const fieldWithNul = (value: unknown): string | undefined => fieldWith(value, (text) => text.includes("\u0000"));

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The name of the first field holding half a surrogate pair (a JSON escape such as "\ud800" alone), or undefined.
 * Such a string is not Unicode text: it is stored as U+FFFD, so the answer and the database disagree, and passwords
 * differing only there hash alike. CONTRACT 7b's invalid UTF-8, written as an escape.
 */
export const fieldWithLoneSurrogate = (value: unknown): string | undefined => fieldWith(value, (text) => LONE_SURROGATE.test(text));

/** 400 invalid_parameter naming the first field of a JSON body with a NUL character or half a surrogate pair. */
export function textFieldError(value: unknown): AppError | undefined {
  const withNul = fieldWithNul(value);
  if (withNul !== undefined) return invalidParameter(withNul, "must not contain NUL characters");
  const withSurrogate = fieldWithLoneSurrogate(value);
  return withSurrogate === undefined ? undefined : invalidParameter(withSurrogate, "must not contain unpaired surrogates");
}
