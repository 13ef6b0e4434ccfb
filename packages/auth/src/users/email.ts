import { domainToASCII, domainToUnicode } from "node:url";

/** A domain of letters, digits, hyphens and dots of any script: nothing the IDNA mapping could read as something else ("%41"). */
const PLAIN_DOMAIN = /^[\p{L}\p{M}\p{N}.-]+$/u;

/**
 * The one spelling of an e-mail address that accounts are stored and looked up under: trimmed, NFC ("ü" typed as
 * u + combining diaeresis is the precomposed "ü"), lower-cased, and the domain in its IDNA form (UTS #46), so
 * "xn--exmple-cua.de", "EXÄMPLE.de" and full-width "ｅｘａｍｐｌｅ.com" are the domains exämple.de and example.com
 * that mail goes to. A domain IDNA refuses is left as typed, for the address rules to judge.
 */
export function normalizeEmail(email: string): string {
  const lower = email.trim().normalize("NFC").toLowerCase();
  const at = lower.lastIndexOf("@");
  if (at === -1) return lower;
  const domain = lower.slice(at + 1);
  if (!PLAIN_DOMAIN.test(domain)) return lower;
  const ascii = domainToASCII(domain);
  return ascii === "" ? lower : `${lower.slice(0, at + 1)}${domainToUnicode(ascii)}`;
}

/** The address with its domain as IDNA ASCII ("xn--..."), the spelling an account made before normalizeEmail may have. */
export function asciiDomainEmail(email: string): string {
  const at = email.lastIndexOf("@");
  const ascii = at === -1 ? "" : domainToASCII(email.slice(at + 1));
  return ascii === "" ? email : `${email.slice(0, at + 1)}${ascii}`;
}
