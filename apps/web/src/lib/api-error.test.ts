import { describe, expect, it } from "vitest";
import { errorMessage, isSessionLost, toApiError } from "./api-error";

describe("toApiError", () => {
  it("reads the nested form with its extras", () => {
    const err = toApiError(402, { error: { message: "low", type: "insufficient_credits_error", code: "insufficient_credits", current_balance: 0.5, required_amount: 2 } });
    expect(err.code).toBe("insufficient_credits");
    expect(err.extras.current_balance).toBe(0.5);
    expect(errorMessage(err)).toContain("$0.50");
  });

  it("states the amount needed and the balance in the one money format (digits under a cent only)", () => {
    // the gateway's answer to a $0.0112 request on a balance of $0.004 (it read "(balance $0.00)")
    const err = toApiError(402, { error: { message: "Insufficient credits: this request needs up to $0.0112, the balance is $0.004.", type: "insufficient_credits_error", code: "insufficient_credits", current_balance: 0.004, required_amount: 0.0112 } });
    expect(errorMessage(err)).toBe("Your balance is too low for this request. Add credits on the Billing page. (needs up to $0.01, balance $0.004)");
    expect(errorMessage(toApiError(402, { error: { code: "insufficient_credits", current_balance: 1234.5 } }))).toMatch(/\(balance \$1,234\.50\)$/);
  });

  it("reads the flat credits form and the status form", () => {
    expect(toApiError(401, { error: "Unauthorized" }).code).toBe("unauthorized");
    expect(toApiError(503, { status: "error", message: "down", error_code: "service_unavailable" }).code).toBe("service_unavailable");
  });

  it("falls back on the HTTP status when the body is not JSON", () => {
    expect(toApiError(429, undefined).code).toBe("rate_limit_exceeded");
  });
});

describe("errorMessage", () => {
  it("prefers the server's message where it names the failed rule or parameter", () => {
    expect(errorMessage(toApiError(400, { error: { code: "weak_password", message: "Password needs a digit." } }))).toBe("Password needs a digit.");
  });

  it("maps known codes to plain language", () => {
    expect(errorMessage(toApiError(401, { error: { code: "invalid_credentials", message: "x" } }))).toMatch(/don't match/);
    expect(errorMessage(toApiError(409, { error: { code: "account_exists", message: "x" } }))).toMatch(/already exists/);
  });

  it("lets one form word a code its own way, leaving other codes alone", () => {
    const overrides = { invalid_credentials: "Your current password is incorrect." };
    expect(errorMessage(toApiError(401, { error: { code: "invalid_credentials", message: "x" } }), overrides)).toBe("Your current password is incorrect.");
    expect(errorMessage(toApiError(409, { error: { code: "account_exists", message: "x" } }), overrides)).toMatch(/already exists/);
  });
});

describe("isSessionLost", () => {
  it("is true only for session_expired and unauthorized", () => {
    expect(isSessionLost(toApiError(401, { error: { code: "session_expired", message: "" } }))).toBe(true);
    expect(isSessionLost(toApiError(401, { error: { code: "invalid_credentials", message: "" } }))).toBe(false);
  });
});
