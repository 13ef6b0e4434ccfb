// Normalization defeats the cheap evasions: case, accents, full-width letters, leetspeak and separators
// inserted between letters ("n.u.d.e", "n u d e").

const LEET: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i" };

/** Lower-case ASCII-ish words separated by single spaces. */
export function normalizeText(input: string): string {
  const folded = input.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
  // Leetspeak only inside words (so "4:3" or "1024" stay numbers for the pattern checks elsewhere).
  const unleet = folded.replace(/(?<=\p{L})[013457@$!]+|[013457@$!]+(?=\p{L})/gu, (m) => [...m].map((c) => LEET[c] ?? c).join(""));
  const words = unleet.replace(/[^\p{L}\p{N}]+/gu, " ").trim();
  return joinSpelledOut(words);
}

/** Rejoins runs of single letters: "n u d e" -> "nude". */
function joinSpelledOut(text: string): string {
  return text.replace(/\b(?:\p{L} ){2,}\p{L}\b/gu, (m) => m.replace(/ /g, ""));
}
