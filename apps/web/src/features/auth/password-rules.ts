// Mirrors SPEC 5's password rules so the user sees them while typing; the server stays authoritative.

export interface PasswordRule {
  id: "length" | "lower" | "upper" | "digit" | "special" | "common";
  label: string;
  ok: boolean;
}

// A short list of the most-used passwords: enough to catch the obvious ones before the server does.
const COMMON = new Set([
  "password", "password1", "password123", "passw0rd", "p@ssw0rd", "p@ssword1", "12345678", "123456789", "1234567890",
  "qwerty123", "qwertyuiop", "iloveyou", "welcome1", "welcome123", "admin123", "letmein1", "abc12345", "football1",
  "monkey123", "sunshine1", "princess1", "trustno1", "changeme", "changeme1", "password!", "password1!", "qwerty1!",
]);

function isCommonPassword(password: string): boolean {
  return COMMON.has(password.toLowerCase());
}

export function checkPassword(password: string, minLength = 8): PasswordRule[] {
  return [
    { id: "length", label: `At least ${minLength} characters`, ok: password.length >= minLength },
    { id: "lower", label: "A lower-case letter", ok: /\p{Ll}/u.test(password) },
    { id: "upper", label: "An upper-case letter", ok: /\p{Lu}/u.test(password) },
    { id: "digit", label: "A digit", ok: /\d/.test(password) },
    { id: "special", label: "A special character (e.g. ! ? # %)", ok: /[^\p{L}\p{N}\s]/u.test(password) },
    { id: "common", label: "Not a commonly used password", ok: password.length > 0 && !isCommonPassword(password) },
  ];
}

export function passwordAcceptable(password: string, minLength = 8): boolean {
  return checkPassword(password, minLength).every((rule) => rule.ok);
}
