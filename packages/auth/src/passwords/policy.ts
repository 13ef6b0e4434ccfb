import { MAX_PASSWORD_LENGTH } from "@gw/config";
import { AppError } from "@gw/shared";
import { isCommonPassword } from "./common-passwords";

/** in @gw/config, which keeps PASSWORD_MIN_LENGTH within it */
export { MAX_PASSWORD_LENGTH };

export interface PasswordRules {
  minLength: number;
}

/** The first SPEC 5 rule the password breaks, or null when it passes them all. */
export function passwordRuleViolation(password: string, rules: PasswordRules): string | null {
  const length = [...password].length;
  if (length < rules.minLength) return `must be at least ${rules.minLength} characters long`;
  if (length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters long`;
  if (!/\p{Lu}/u.test(password)) return "must contain an upper-case letter";
  if (!/\p{Ll}/u.test(password)) return "must contain a lower-case letter";
  if (!/\p{N}/u.test(password)) return "must contain a digit";
  if (!/[^\p{L}\p{N}\s]/u.test(password)) return "must contain a special character";
  if (isCommonPassword(password)) return "is a commonly used password; choose another";
  return null;
}

/** Throws 400 weak_password naming the rule, as CONTRACT 1 asks. */
export function assertStrongPassword(password: string, rules: PasswordRules, field = "password"): void {
  const violation = passwordRuleViolation(password, rules);
  if (violation) throw new AppError("weak_password", `The ${field} ${violation}.`);
}
