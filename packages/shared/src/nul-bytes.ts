/**
 * The name of the first field of a parsed JSON body whose key or string value holds a NUL character, or undefined.
 * CONTRACT 7b: NUL bytes get a 4xx; they would otherwise reach e-mails, names and the database unnoticed.
 */
export function fieldWithNul(value: unknown, path = ""): string | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? path || "body" : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  const entries: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((item, index) => [`[${index}]`, item])
    : Object.entries(value).map(([key, item]) => [path ? `.${key}` : key, item]);
  for (const [segment, item] of entries) {
    const name = `${path}${segment}`;
    if (segment.includes("\u0000")) return name.replaceAll("\u0000", "\\u0000");
    const found = fieldWithNul(item, name);
    if (found !== undefined) return found;
  }
  return undefined;
}
