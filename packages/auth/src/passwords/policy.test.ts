import { describe, expect, it } from "vitest";
import { AppError } from "@gw/shared";
import { assertStrongPassword, MAX_PASSWORD_LENGTH, passwordRuleViolation } from "./policy";

const rules = { minLength: 8 };

describe("password rules (SPEC 5)", () => {
  it("accepts a password meeting every rule", () => {
    expect(passwordRuleViolation("Quartz-Lamp-92", rules)).toBeNull();
  });

  it.each([
    ["Ab1!xyz", "at least 8 characters"],
    ["quartz-lamp-92", "upper-case"],
    ["QUARTZ-LAMP-92", "lower-case"],
    ["Quartz-Lamp-xx", "digit"],
    ["QuartzLamp92", "special character"],
    ["Password123!", "commonly used"],
    ["Passw0rd!", "commonly used"],
    ["Iloveyou1", "special character"],
    ["Iloveyou1!", "commonly used"],
  ])("rejects %s (%s)", (password, rule) => {
    expect(passwordRuleViolation(password, rules)).toContain(rule);
  });

  it("honours a configured minimum length", () => {
    expect(passwordRuleViolation("Quartz-Lamp-92", { minLength: 20 })).toContain("at least 20");
  });

  it("caps the length to keep hashing cheap", () => {
    const huge = `Aa1!${"x".repeat(MAX_PASSWORD_LENGTH)}`;
    expect(passwordRuleViolation(huge, rules)).toContain(`at most ${MAX_PASSWORD_LENGTH}`);
  });

  it("throws weak_password naming the field and the rule", () => {
    try {
      assertStrongPassword("short", rules, "new password");
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe("weak_password");
      expect((err as AppError).message).toBe("The new password must be at least 8 characters long.");
    }
  });
});
