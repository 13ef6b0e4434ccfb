import { AppError } from "@gw/shared";
import { foldText, normalizeFolded, normalizeText } from "./normalize";
import { CONTEXT_RULES } from "./rules";
import { CATEGORY_LABELS, HARMLESS_PHRASES, PERSONAL_PATTERNS, TERMS, type ModerationCategory } from "./terms";

export interface ModerationVerdict {
  flagged: boolean;
  category?: ModerationCategory;
  /** what matched (a term or a pattern name), for logs; never echoed with the prompt */
  match?: string;
}

function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * Patterns whose match is personal data only when its digits pass a check. Every match is tried, not the first:
 * "+2 3 4" or a number failing Luhn before a real phone or card number must not hide it.
 */
const DIGIT_CHECKS = new Map<string, (digits: string) => boolean>([
  ["payment card number", luhnValid],
  ["international phone number", (digits) => digits.length >= 8 && digits.length <= 15],
]);
const ALL_MATCHES = new Map(PERSONAL_PATTERNS.map(({ name, pattern }) => [name, new RegExp(pattern.source, "g")]));

function personalMatch(name: string, pattern: RegExp, folded: string): boolean {
  const check = DIGIT_CHECKS.get(name);
  const all = ALL_MATCHES.get(name);
  if (!check || !all) return pattern.test(folded);
  for (const m of folded.matchAll(all)) if (check(m[0].replace(/\D/g, ""))) return true;
  return false;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The harmless phrases as one whole-word regex; each match becomes a clause boundary. */
const HARMLESS = new RegExp(`(?:^| )(?:${HARMLESS_PHRASES.map((p) => escape(normalizeText(p))).sort((a, b) => b.length - a.length).join("|")})(?= |$)`, "g");

/** Per category, in this order: one regex of its terms (whole-word alternatives) and its context rules, compiled once. */
const CATEGORY_CHECKS = (Object.keys(TERMS) as ModerationCategory[]).map((category) => {
  const alternatives = TERMS[category]
    .map((t) => escape(normalizeText(t)))
    .sort((a, b) => b.length - a.length);
  return {
    category,
    terms: new RegExp(`(?:^| )(${alternatives.join("|")})(?= |$)`),
    rules: CONTEXT_RULES.filter((r) => r.category === category),
  };
});

/** Every listed single-word term, to read a word with letters masked by "*" ("n*ked", "p**n") as the term it hides. */
const TERM_WORDS = [...new Set(Object.values(TERMS).flat().map((t) => normalizeText(t)).filter((t) => /^[a-z0-9]+$/.test(t)))];

/** A word of letters in which "*" stands for letters, at least two letters and one "*" after a letter. */
const MASKED_WORD = /(?<![\p{L}\p{N}*])(?=[\p{L}*]*\p{L}\*)(?=(?:\**\p{L}){2})[\p{L}*]{3,40}(?![\p{L}\p{N}*])/gu;

/** Each masked word replaced by the listed term it matches letter for letter (one letter per "*"), if any. */
function unmask(folded: string): string {
  if (!folded.includes("*")) return folded;
  return folded.replace(MASKED_WORD, (word) => {
    const lower = word.toLowerCase();
    const hidden = TERM_WORDS.find((t) => t.length === lower.length && [...lower].every((c, i) => c === "*" || c === t[i]));
    return hidden ?? word;
  });
}

/** A word with its repeated letters written once: "nuuude" -> "nude", "boobs" -> "bobs". */
const squeeze = (word: string): string => word.replace(/([a-z])\1+/g, "$1");

/** Every listed single-word term by its squeezed form, to read a stretched word ("nuuude", "pooorn") as the term. */
const TERM_BY_SQUEEZED = new Map(TERM_WORDS.map((t) => [squeeze(t), t] as const));

/** A word of the normalized text with a letter three times in a row, which no English word has ("nuuude", "seeex"). */
const STRETCHED_WORD = /(?<![a-z0-9])(?=[a-z0-9]*([a-z])\1\1)[a-z0-9]+/g;

/** Each stretched word replaced by the listed term it spells with its letters once, if any. */
function unstretch(normalized: string): string {
  return normalized.replace(STRETCHED_WORD, (word) => TERM_BY_SQUEEZED.get(squeeze(word)) ?? word);
}

/** The fast local policy: microseconds per prompt, no network. */
export function checkLocalPolicy(...texts: Array<string | undefined | null>): ModerationVerdict {
  for (const raw of texts) {
    if (!raw) continue;
    const folded = foldText(raw);
    const normalized = unstretch(normalizeFolded(unmask(folded))).replace(HARMLESS, " |");
    for (const { category, terms, rules } of CATEGORY_CHECKS) {
      const m = terms.exec(normalized);
      if (m) return { flagged: true, category, match: m[1] };
      for (const rule of rules) {
        if (rule.pattern.test(normalized) && (!rule.context || rule.context.test(normalized)) && !rule.unless?.test(normalized)) {
          return { flagged: true, category, match: rule.name };
        }
      }
    }
    // Patterns read the folded text: invisible characters dropped and full-width digits folded, punctuation kept.
    for (const { name, pattern } of PERSONAL_PATTERNS) {
      if (personalMatch(name, pattern, folded)) return { flagged: true, category: "personal_information", match: name };
    }
  }
  return { flagged: false };
}

export function policyViolation(category: ModerationCategory): AppError {
  return new AppError("content_policy_violation", `The prompt violates the usage policy: ${CATEGORY_LABELS[category]} (category '${category}').`);
}
