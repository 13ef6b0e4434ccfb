/**
 * Characters as speech is billed and its length limits count them: code points, so an emoji is one, not the two
 * UTF-16 units `string.length` counts. Counted in place: spreading the string into an array of code points
 * allocates one string per character, for every request near the limit.
 */
export function characterCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdbff) continue;
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) {
      count--;
      i++;
    }
  }
  return count;
}
