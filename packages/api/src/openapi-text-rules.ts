// Rewrites of the generated OpenAPI document so that it states the text rules the server applies, in a form every
// JSON Schema tool reads (schemathesis, Python's `re`, as much as ECMAScript).

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** What ECMAScript's `\s` matches. */
const WHITESPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";

const hex = (cp: number): string => `\\u${cp.toString(16).padStart(4, "0")}`;
/** A code point inside a character class: an escape in the BMP, the character itself above (no `\u{…}` in Python). */
const classChar = (cp: number): string => (cp > 0xffff ? String.fromCodePoint(cp) : hex(cp));

const expansions = new Map<string, string>();

/** `\p{Name}` as explicit ranges (for inside a character class), from the Unicode data of this JavaScript engine. */
function propertyRanges(name: string): string {
  const known = expansions.get(name);
  if (known !== undefined) return known;
  const test = new RegExp(`^\\p{${name}}$`, "u");
  let out = "";
  let start = -1;
  for (let cp = 0; cp <= 0x110000; cp++) {
    // surrogates are no text (and no JSON string carries one alone); the server refuses them anyway
    const member = cp < 0x110000 && (cp < 0xd800 || cp > 0xdfff) && test.test(String.fromCodePoint(cp));
    if (member && start < 0) start = cp;
    if (!member && start >= 0) {
      out += start === cp - 1 ? classChar(start) : `${classChar(start)}-${classChar(cp - 1)}`;
      start = -1;
    }
  }
  expansions.set(name, out);
  return out;
}

/**
 * A pattern without Unicode property escapes: each `\p{…}` (only found inside character classes here) and each `\s`
 * in a class become the ranges they stand for. Python's `re` knows neither `\p{…}` nor `\u{…}`, so a tool generating
 * examples from the document in Python could not use the pattern at all.
 */
export function portablePattern(pattern: string): string {
  if (!pattern.includes("\\p{") && !pattern.includes("\\s")) return pattern;
  return pattern.replace(/\[(\^?)((?:\\.|[^\]\\])*)\]/g, (_whole, negate: string, body: string) => {
    const expanded = body.replace(/\\p\{([A-Za-z_]+)\}|\\s/g, (escape: string, name?: string) => (name ? propertyRanges(name) : WHITESPACE));
    return `[${negate}${expanded}]`;
  });
}

/** The NUL character, refused in every key and string of a body and in path parameters (CONTRACT 7b). */
const WITHOUT_NUL = "^[^\\u0000]*$";
export const TEXT_JSON_COMPONENT = "TextJson";

/** Any JSON value whose strings and keys hold no NUL: what a body may carry beyond its declared fields. */
export const textJsonSchema: Json = {
  description: "any JSON value without a NUL character in its strings or keys",
  anyOf: [
    { type: "string", pattern: WITHOUT_NUL },
    { type: ["number", "boolean", "null"] },
    { type: "array", items: { $ref: `#/components/schemas/${TEXT_JSON_COMPONENT}` } },
    { type: "object", propertyNames: { pattern: WITHOUT_NUL }, additionalProperties: { $ref: `#/components/schemas/${TEXT_JSON_COMPONENT}` } },
  ],
};

/** A string schema that also refuses NUL (beside a pattern of its own, as an `allOf` member). */
function withoutNul(schema: Json): void {
  if (typeof schema.pattern !== "string") {
    schema.pattern = WITHOUT_NUL;
    return;
  }
  const allOf = Array.isArray(schema.allOf) ? schema.allOf : [];
  schema.allOf = [...allOf, { pattern: WITHOUT_NUL }];
}

const isStringSchema = (schema: Json): boolean => schema.type === "string" || (Array.isArray(schema.type) && schema.type.includes("string"));

/** The body's rules beside its declared fields: no NUL in any string or key, declared or not. */
export function bodyTextRules(schema: unknown): void {
  if (!isObject(schema) || "$ref" in schema) return;
  if (isStringSchema(schema)) withoutNul(schema);
  if (schema.type === "object") {
    schema.propertyNames = { pattern: WITHOUT_NUL };
    if (schema.additionalProperties === undefined || schema.additionalProperties === true) {
      schema.additionalProperties = { $ref: `#/components/schemas/${TEXT_JSON_COMPONENT}` };
    }
  }
  for (const key of ["properties", "patternProperties"]) {
    if (isObject(schema[key])) for (const child of Object.values(schema[key])) bodyTextRules(child);
  }
  for (const key of ["items", "additionalProperties", "not"]) bodyTextRules(schema[key]);
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    if (Array.isArray(schema[key])) for (const child of schema[key]) bodyTextRules(child);
  }
}

/** Path parameters refuse NUL too (a `%00` in a key id is a 400, not a lookup). */
export function pathParameterTextRules(parameter: unknown): void {
  if (isObject(parameter) && parameter.in === "path" && isObject(parameter.schema) && isStringSchema(parameter.schema)) withoutNul(parameter.schema);
}

/**
 * REST query values are text: a parameter whose input also takes a JSON number (a tRPC call's) is documented by its
 * text form alone, with its bounds in that form's pattern.
 */
export function queryParameterText(parameter: unknown): void {
  if (!isObject(parameter) || parameter.in !== "query" || !isObject(parameter.schema)) return;
  const { anyOf, type: _type, minimum: _minimum, maximum: _maximum, ...rest } = parameter.schema;
  const text = Array.isArray(anyOf) ? anyOf.find((member) => isObject(member) && member.type === "string") : undefined;
  if (!isObject(text)) return;
  if (typeof rest.default === "number") rest.default = String(rest.default);
  parameter.schema = { ...rest, ...text };
}

/** Every `pattern` of the document in its portable form. */
export function portablePatterns(node: unknown): void {
  if (Array.isArray(node)) {
    for (const child of node) portablePatterns(child);
    return;
  }
  if (!isObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (key === "pattern" && typeof value === "string") node[key] = portablePattern(value);
    else portablePatterns(value);
  }
}
