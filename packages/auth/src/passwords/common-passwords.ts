import { dictionary } from "@zxcvbn-ts/language-common";

// zxcvbn-ts's maintained list of ~49k leaked passwords, all lower-case.
const COMMON = new Set(dictionary["passwords-common"]);

/**
 * True when the password is a commonly used one, ignoring case and trailing punctuation, so that
 * "Password123!" counts as the listed "password123".
 */
export function isCommonPassword(password: string): boolean {
  const lower = password.toLowerCase();
  if (COMMON.has(lower)) return true;
  const withoutTrailingSymbols = lower.replace(/[^\p{L}\p{N}]+$/u, "");
  return withoutTrailingSymbols !== lower && COMMON.has(withoutTrailingSymbols);
}
