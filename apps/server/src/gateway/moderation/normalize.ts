// Normalization defeats the cheap evasions: case, accents, full-width letters, leetspeak and separators
// inserted between letters ("n.u.d.e", "n u d e").

const LEET: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s" };

/** Lower-case ASCII-ish words separated by single spaces. */
export function normalizeText(input: string): string {
  const folded = input.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
  // Leetspeak only inside words (so "4:3" or "1024" stay numbers for the pattern checks elsewhere).
  // Digits count as letters when touching one; "@" and "$" only before a letter ("$ex"), so "nude!" stays "nude".
  const unleet = folded.replace(/(?<=\p{L})[013457]+|[013457@$]+(?=\p{L})/gu, (m) => [...m].map((c) => LEET[c] ?? c).join(""));
  // "n.u.d.e", "n-u-d-e", "n*u*d*e" -> "nude" (punctuation between single letters), before separators become spaces.
  const joined = unleet.replace(/(?<![\p{L}\p{N}])\p{L}(?:[.\-_*+~|/]+\p{L}(?![\p{L}\p{N}])){2,}/gu, (m) => m.replace(/[^\p{L}]/gu, ""));
  const words = joined.replace(/[^\p{L}\p{N}]+/gu, " ").trim();
  return joinSpelledOut(words);
}

/** Rejoins runs of four or more space-separated single letters: "n u d e" -> "nude". */
function joinSpelledOut(text: string): string {
  return text.replace(/(?<![\p{L}\p{N}])(?:\p{L} ){3,}\p{L}(?![\p{L}\p{N}])/gu, (m) => m.replace(/ /g, ""));
}
