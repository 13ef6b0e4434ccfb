import { AppError } from "@gw/shared";
import { normalizeText } from "./normalize";
import { CATEGORY_LABELS, PERSONAL_PATTERNS, TERMS, type ModerationCategory } from "./terms";

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

/** One regex per category: whole-word alternatives, compiled once. */
const CATEGORY_REGEXES = (Object.keys(TERMS) as ModerationCategory[]).map((category) => {
  const alternatives = TERMS[category]
    .map((t) => normalizeText(t).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .sort((a, b) => b.length - a.length);
  return { category, regex: new RegExp(`(?:^| )(${alternatives.join("|")})(?= |$)`) };
});

/** The fast local policy: microseconds per prompt, no network. */
export function checkLocalPolicy(...texts: Array<string | undefined | null>): ModerationVerdict {
  for (const raw of texts) {
    if (!raw) continue;
    const normalized = normalizeText(raw);
    // Also match with all spaces removed from short runs, so "por n" or "s e x" style splits are caught by joinSpelledOut.
    for (const { category, regex } of CATEGORY_REGEXES) {
      const m = regex.exec(normalized);
      if (m) return { flagged: true, category, match: m[1] };
    }
    for (const { name, pattern } of PERSONAL_PATTERNS) {
      const m = pattern.exec(raw);
      if (!m) continue;
      if (name === "payment card number" && !luhnValid(m[0].replace(/\D/g, ""))) continue;
      return { flagged: true, category: "personal_information", match: name };
    }
  }
  return { flagged: false };
}

export function policyViolation(category: ModerationCategory): AppError {
  return new AppError("content_policy_violation", `The prompt violates the usage policy: ${CATEGORY_LABELS[category]} (category '${category}').`);
}
