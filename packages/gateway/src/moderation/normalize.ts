// Normalization defeats the cheap evasions before any matching: invisible characters ("nu\u200bde"), look-alike
// letters from other scripts ("nudе" with a Cyrillic е), case, accents, full-width and other compatibility forms,
// leetspeak and separators inserted between letters ("n.u.d.e", "n u d e"). Documented in docs/moderation.md.

const LEET: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s" };

/**
 * Cyrillic, Greek, Armenian and Latin-extension letters that look like a Latin letter, mapped to it. Upper and lower case are
 * listed apart because they can differ: Greek Η looks like H but η like n, Greek Ν like N but ν like v.
 */
const CONFUSABLES: Record<string, string> = {
  // Cyrillic
  а: "a", А: "a", в: "b", В: "b", е: "e", Е: "e", ё: "e", Ё: "e", һ: "h", Һ: "h", Н: "h", н: "h", і: "i", І: "i", ӏ: "i", Ӏ: "i",
  ј: "j", Ј: "j", к: "k", К: "k", м: "m", М: "m", о: "o", О: "o", п: "n", р: "p", Р: "p", ԛ: "q", Ԛ: "q", г: "r", с: "c", С: "c",
  ѕ: "s", Ѕ: "s", т: "t", Т: "t", у: "y", У: "y", ү: "y", Ү: "y", ԝ: "w", Ԝ: "w", х: "x", Х: "x", ԁ: "d", Ԁ: "d", ь: "b",
  // Greek
  α: "a", Α: "a", Β: "b", ε: "e", Ε: "e", Ζ: "z", η: "n", Η: "h", ι: "i", Ι: "i", κ: "k", Κ: "k", Μ: "m", ν: "v", Ν: "n", ο: "o",
  Ο: "o", ρ: "p", Ρ: "p", ϲ: "c", Ϲ: "c", τ: "t", Τ: "t", υ: "u", Υ: "y", χ: "x", Χ: "x", ω: "w",
  // Armenian
  օ: "o", ո: "n", ս: "u", հ: "h",
  // Latin letters outside ASCII that NFKD does not fold
  ɑ: "a", ɡ: "g", ı: "i", ȷ: "j", ɩ: "i", ʏ: "y", ᴅ: "d",
  // small capitals, what "small caps" text generators type ("ᴘᴏʀɴ")
  ᴀ: "a", ʙ: "b", ᴄ: "c", ᴇ: "e", ꜰ: "f", ɢ: "g", ʜ: "h", ɪ: "i", ᴊ: "j", ᴋ: "k", ʟ: "l", ᴍ: "m", ɴ: "n", ᴏ: "o", ᴘ: "p",
  ꞯ: "q", ʀ: "r", ꜱ: "s", ᴛ: "t", ᴜ: "u", ᴠ: "v", ᴡ: "w", ᴢ: "z",
};
const CONFUSABLE_CHARS = new RegExp(`[${Object.keys(CONFUSABLES).join("")}]`, "gu");

/**
 * Enclosed letters NFKD does not fold to a plain letter: parenthesized ones (⒩, 🄝), which it turns into "(n)", and
 * negative circled and squared capitals (🅝, 🅽), which it leaves alone. The first code point of each run of a to z.
 */
const ENCLOSED_LETTERS = /[\u249c-\u24b5\u{1F110}-\u{1F129}\u{1F150}-\u{1F169}\u{1F170}-\u{1F189}]/gu;
const ENCLOSED_RUNS = [0x249c, 0x1f110, 0x1f150, 0x1f170];
const enclosedLetter = (c: string): string => {
  const code = c.codePointAt(0) ?? 0;
  const start = ENCLOSED_RUNS.find((first) => code >= first && code < first + 26) ?? code;
  return String.fromCharCode(97 + code - start);
};

/**
 * Characters that render as nothing: format characters (zero-width space/joiners, word joiner, BOM, soft hyphen,
 * bidi marks, tags) and the Hangul fillers, which are letters that draw as blanks.
 */
const INVISIBLE = /[\p{Cf}\u115f\u1160\u3164\uffa0]/gu;

/**
 * Invisible characters dropped, compatibility forms (full-width, mathematical, circled letters) and accents folded,
 * look-alike letters mapped to Latin. Case, punctuation and digits are kept: the personal-data patterns and the
 * case-aware rules read this form.
 */
export function foldText(input: string): string {
  return input
    .replace(INVISIBLE, "")
    .replace(ENCLOSED_LETTERS, enclosedLetter)
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(CONFUSABLE_CHARS, (c) => CONFUSABLES[c] ?? c);
}

/**
 * Lower-case words of letters and digits separated by single spaces, clauses by " | ": the form every term and rule is
 * matched on.
 */
export function normalizeText(input: string): string {
  return normalizeFolded(foldText(input));
}

/** normalizeText for a text already through foldText (the policy needs both forms and folds once). */
export function normalizeFolded(foldedText: string): string {
  const folded = foldedText.toLowerCase();
  // Leetspeak only inside words (so "4:3" or "1024" stay numbers for the pattern checks elsewhere).
  // Digits count as letters when touching one; "@" and "$" only before a letter ("$ex"), so "nude!" stays "nude".
  // "!" reads "i" only between two letters ("d!sney"), so "wow!" and "wow!great" keep their clause mark.
  const unleet = folded
    .replace(/(?<=\p{L})[013457]+|[013457@$]+(?=\p{L})/gu, (m) => [...m].map((c) => LEET[c] ?? c).join(""))
    .replace(/(?<=\p{L})!(?=\p{L})/gu, "i");
  // "n.u.d.e", "n-u-d-e", "n*u*d*e" -> "nude" (punctuation between single letters), before separators become spaces.
  const joined = unleet.replace(/(?<![\p{L}\p{N}])\p{L}(?:[.\-_*+~|/]+\p{L}(?![\p{L}\p{N}])){2,}/gu, (m) => m.replace(/[^\p{L}]/gu, ""));
  // Clause punctuation becomes a boundary no phrase or rule matches across: "cinematic shot, a young man" is not
  // "shot a young man", "an old sailor, moon rising" not "sailor moon".
  const clauses = joined.replace(/[^\p{L}\p{N}]*[,.;:!?()[\]{}"\n]+[^\p{L}\p{N}]*/gu, " | ");
  const words = clauses.replace(/[^\p{L}\p{N}|]+/gu, " ").replace(/^[ |]+|[ |]+$/g, "");
  return joinSpelledOut(words);
}

/** Rejoins runs of three or more space-separated single letters: "s e x" -> "sex", "n u d e" -> "nude". */
function joinSpelledOut(text: string): string {
  return text.replace(/(?<![\p{L}\p{N}])(?:\p{L} ){2,}\p{L}(?![\p{L}\p{N}])/gu, (m) => m.replace(/ /g, ""));
}
